/**
 * The cached token authenticator keeps one answer per token and audiences: the same pair is
 * answered from the cache, and a different token, a different audience list, or no list at all
 * (the API server's own audiences) is looked up afresh, even where the parts would join into the
 * same text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CachedTokenAuthenticator } from '../../src/auth/token-cache.js';
import type { AuthenticationResult, TokenAuthenticator } from '../../src/auth/authenticator.js';

/** Answers every token with a user named after the token and audiences, and records each question. */
class NamingAuthenticator implements TokenAuthenticator {
  readonly asked: string[] = [];

  authenticateToken(token: string, audiences?: string[]): Promise<AuthenticationResult> {
    const question = `${token} ${audiences === undefined ? '(server)' : JSON.stringify(audiences)}`;
    this.asked.push(question);
    return Promise.resolve({ user: { name: question, uid: '', groups: [], extra: {} } });
  }
}

test('one answer per token and audiences', async () => {
  const inner = new NamingAuthenticator();
  const cache = new CachedTokenAuthenticator(inner, { successTtlMs: 60_000, failureTtlMs: 0, cacheErrors: true });
  const questions: Array<[string, string[] | undefined]> = [
    ['abc', undefined],
    ['abc', []],
    ['abc', ['a']],
    ['abc', ['a', 'b']],
    ['abc', ['a,b']],
    ['abc', ['ab']],
    // Joined without lengths these would meet: 'ab' + 'c' and 'a' + 'bc'.
    ['ab', ['c']],
    ['a', ['bc']],
    ['abc|', undefined],
    ['abc', ['-']],
    ['', undefined],
  ];
  for (const [token, audiences] of questions) {
    const answer = await cache.authenticateToken(token, audiences);
    assert.ok(answer !== undefined && 'user' in answer);
    assert.equal(answer.user.name, `${token} ${audiences === undefined ? '(server)' : JSON.stringify(audiences)}`);
  }
  assert.equal(inner.asked.length, questions.length, 'every distinct question reached the authenticator');
  for (const [token, audiences] of questions) {
    const again = await cache.authenticateToken(token, audiences === undefined ? undefined : [...audiences]);
    assert.ok(again !== undefined && 'user' in again);
    assert.equal(again.user.name, `${token} ${audiences === undefined ? '(server)' : JSON.stringify(audiences)}`);
  }
  assert.equal(inner.asked.length, questions.length, 'asked again, each was answered from the cache');
});

test('a connection remembers its last token, and another token on it, or the same token on another connection, gets its own answer', async () => {
  const inner = new NamingAuthenticator();
  const cache = new CachedTokenAuthenticator(inner, { successTtlMs: 60_000, failureTtlMs: 0, cacheErrors: true });
  const first = {};
  const second = {};
  const ask = async (connection: object, token: string, audiences?: string[]): Promise<string> => {
    const answer = await cache.authenticateTokenOn(connection, token, audiences);
    assert.ok(answer !== undefined && 'user' in answer);
    return answer.user.name;
  };
  assert.equal(await ask(first, 'alice'), 'alice (server)');
  assert.equal(await ask(first, 'alice'), 'alice (server)');
  assert.equal(await ask(first, 'bob'), 'bob (server)');
  assert.equal(await ask(first, 'alice'), 'alice (server)');
  assert.equal(await ask(first, 'alice', ['api']), 'alice ["api"]');
  assert.equal(await ask(second, 'bob'), 'bob (server)');
  assert.equal(await ask(second, 'carol'), 'carol (server)');
  // The per-connection keys are the cache's keys: a question without a connection shares the answers.
  assert.equal((await cache.authenticateToken('carol')) !== undefined, true);
  assert.deepEqual(inner.asked, ['alice (server)', 'bob (server)', 'alice ["api"]', 'carol (server)']);
});
