/**
 * RFC 3339 times as Go 1.26's time.Parse(time.RFC3339, ...) reads them: the answers below were
 * recorded from Go. A time Go refuses must be refused with its message (client-go cannot decode a
 * list holding it); the ones it accepts, including its looser offsets, must be accepted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goTimeError } from '../../src/codec/go-time.js';

const REFUSED: Array<[string, string]> = [
  ['2024-13-45T00:00:00Z', 'month out of range'],
  ['2024-00-01T00:00:00Z', 'month out of range'],
  ['2024-02-30T00:00:00Z', 'day out of range'],
  ['2023-02-29T00:00:00Z', 'day out of range'],
  ['2024-01-00T00:00:00Z', 'day out of range'],
  ['2024-04-31T00:00:00Z', 'day out of range'],
  ['2024-01-01T25:61:00Z', 'hour out of range'],
  ['2024-01-01T24:00:00Z', 'hour out of range'],
  ['2024-01-01T23:60:00Z', 'minute out of range'],
  ['2024-01-01T23:59:60Z', 'second out of range'],
  ['2024-01-01T00:00:00+25:00', 'time zone offset hour out of range'],
];
const ACCEPTED = [
  '2024-02-29T00:00:00Z',
  '2024-01-01T00:00:00+24:00',
  '2024-01-01T00:00:00+23:60',
  '0000-01-01T00:00:00Z',
  '2024-01-01T00:00:00.123456789123Z',
  '2024-01-01T00:00:00-00:00',
  '2000-02-29T12:00:00Z',
];

test('times Go refuses for a value out of range are refused with its message', () => {
  for (const [text, what] of REFUSED) assert.equal(goTimeError(text), `parsing time "${text}": ${what}`, text);
});

test('lower-case T and Z and other shapes are refused', () => {
  for (const text of ['2024-01-01t00:00:00Z', '2024-01-01T00:00:00z', '2024-01-01 00:00:00Z', '2024-1-01T00:00:00Z', '']) {
    assert.match(goTimeError(text) ?? '', /^parsing time .* cannot parse/, text);
  }
});

test('times Go accepts are accepted', () => {
  for (const text of ACCEPTED) assert.equal(goTimeError(text), undefined, text);
});
