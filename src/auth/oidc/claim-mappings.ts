import type { User } from '../../api/user.js';
import { goQuote } from '../../validation/field-errors.js';
import type { JwtAuthenticatorSpec } from './authentication-configuration.js';
import type { CompiledJwtRules } from './authentication-config-validation.js';
import { claimToCel, evaluateAuthExpression, stringListOf, userToCel, type CompiledClaimExpression } from './claims-cel.js';
import { goValueTypeError } from './go-format.js';

/** A verified token's claims, as JSON. */
export type Claims = Record<string, unknown>;

const CREDENTIAL_ID_KEY = 'authentication.kubernetes.io/credential-id';

/**
 * kube's claim mappings and validation rules, in kube's order (username, groups, uid, extra, required
 * claims, claim validation rules, user validation rules): the user, or the first error in kube's words.
 */
export function userFromClaims(spec: JwtAuthenticatorSpec, rules: CompiledJwtRules, claims: Claims): User | string {
  const celClaims = hasCel(rules) ? claimToCel(claims) : undefined;
  const username = usernameOf(spec, rules, claims, celClaims);
  if (typeof username !== 'string') return username.error;
  const groups = groupsOf(spec, rules, claims, celClaims);
  if (!Array.isArray(groups)) return groups.error;
  const uid = uidOf(spec, rules, claims, celClaims);
  if (typeof uid !== 'string') return uid.error;
  const extra: Record<string, string[]> = {};
  if (typeof claims.jti === 'string') extra[CREDENTIAL_ID_KEY] = [`JTI=${claims.jti}`];
  for (const mapping of rules.extra) {
    const out = evaluateAuthExpression(mapping.compiled, 'claims', celClaims);
    if (!out.ok) return out.error;
    const values = stringListOf(out.value);
    if (values instanceof Error) return `oidc: error evaluating extra claim expression: ${mapping.compiled.expression}: ${values.message}`;
    if (values !== undefined) extra[mapping.key] = values;
  }
  for (const rule of spec.claimValidationRules) {
    if (rule.claim === '') continue;
    if (!(rule.claim in claims)) return `oidc: required claim ${rule.claim} not present in ID token`;
    const value = claims[rule.claim] ?? '';
    if (typeof value !== 'string') return `oidc: parse claim ${rule.claim}: ${goValueTypeError(value, 'string')}`;
    if (value !== rule.requiredValue) return `oidc: required claim ${rule.claim} value does not match. Got = ${value}, want = ${rule.requiredValue}`;
  }
  const claimRules = checkRules(rules.claimValidation, 'claims', celClaims);
  if (claimRules !== undefined) return `oidc: error evaluating claim validation expression: ${claimRules}`;
  const user: User = { name: username, uid, groups, extra };
  if (rules.userValidation.length > 0) {
    const userRules = checkRules(rules.userValidation, 'user', userToCel(user));
    if (userRules !== undefined) return `oidc: error evaluating user info validation rule: ${userRules}`;
  }
  return user;
}

function usernameOf(spec: JwtAuthenticatorSpec, rules: CompiledJwtRules, claims: Claims, celClaims: unknown): string | { error: string } {
  if (rules.username !== undefined) {
    const out = evaluateAuthExpression(rules.username, 'claims', celClaims);
    if (!out.ok) return { error: `oidc: error evaluating username claim expression: ${out.error}` };
    if (typeof out.value !== 'string') return { error: 'oidc: error evaluating username claim expression: username claim expression must return a string' };
    if (out.value === '') return { error: 'oidc: empty username via CEL expression is not allowed' };
    return out.value;
  }
  const mapping = spec.claimMappings.username;
  const claim = mapping.claim;
  const value = claimString(claims, claim);
  if (typeof value !== 'string') return { error: `oidc: parse username claims ${goQuote(claim)}: ${value.error}` };
  if (claim === 'email' && 'email_verified' in claims) {
    const verified = claims.email_verified ?? false;
    if (typeof verified !== 'boolean') return { error: `oidc: parse 'email_verified' claim: ${goValueTypeError(verified, 'bool')}` };
    if (!verified) return { error: 'oidc: email not verified' };
  }
  return `${mapping.prefix ?? ''}${value}`;
}

function groupsOf(spec: JwtAuthenticatorSpec, rules: CompiledJwtRules, claims: Claims, celClaims: unknown): string[] | { error: string } {
  const mapping = spec.claimMappings.groups;
  if (mapping.claim !== '' && mapping.claim in claims) {
    const value = claims[mapping.claim];
    let groups: string[];
    if (value === null || value === undefined) groups = [];
    else if (typeof value === 'string') groups = [value];
    else if (Array.isArray(value) && value.every((g) => typeof g === 'string' || g === null)) groups = value.map((g) => (typeof g === 'string' ? g : ''));
    // kube's stringOrArray reports the failure of its last attempt, a single string.
    else return { error: `oidc: parse groups claim ${goQuote(mapping.claim)}: ${goValueTypeError(value, 'string')}` };
    return groups.map((g) => `${mapping.prefix ?? ''}${g}`);
  }
  if (rules.groups === undefined) return [];
  const out = evaluateAuthExpression(rules.groups, 'claims', celClaims);
  if (!out.ok) return { error: `oidc: error evaluating group claim expression: ${out.error}` };
  const groups = stringListOf(out.value);
  if (groups instanceof Error) return { error: `oidc: error evaluating group claim expression: ${groups.message}` };
  return groups ?? [];
}

function uidOf(spec: JwtAuthenticatorSpec, rules: CompiledJwtRules, claims: Claims, celClaims: unknown): string | { error: string } {
  const claim = spec.claimMappings.uid.claim;
  if (claim !== '') {
    const value = claimString(claims, claim);
    return typeof value === 'string' ? value : { error: `oidc: parse uid claim ${goQuote(claim)}: ${value.error}` };
  }
  if (rules.uid === undefined) return '';
  const out = evaluateAuthExpression(rules.uid, 'claims', celClaims);
  if (!out.ok) return { error: `oidc: error evaluating uid claim expression: ${out.error}` };
  if (typeof out.value !== 'string') return { error: 'oidc: error evaluating uid claim expression: uid claim expression must return a string' };
  return out.value;
}

function hasCel(rules: CompiledJwtRules): boolean {
  return rules.username !== undefined || rules.groups !== undefined || rules.uid !== undefined || rules.extra.length > 0 || rules.claimValidation.length > 0;
}

/** A string claim as kube's unmarshalClaim reads it: absent, or not a string (null reads as ''), is an error. */
function claimString(claims: Claims, name: string): string | { error: string } {
  if (!(name in claims)) return { error: 'claim not present' };
  const value = claims[name] ?? '';
  return typeof value === 'string' ? value : { error: goValueTypeError(value, 'string') };
}

/** kube's checkValidationRulesEvaluation: the first rule that errs, returns a non-bool, or is false. */
function checkRules(rules: { compiled: CompiledClaimExpression; message: string }[], variable: 'claims' | 'user', value: unknown): string | undefined {
  // kube evaluates every rule before looking at any result: an evaluation error wins over an earlier false.
  const results: { rule: (typeof rules)[number]; value: unknown }[] = [];
  for (const rule of rules) {
    const out = evaluateAuthExpression(rule.compiled, variable, value);
    if (!out.ok) return out.error;
    results.push({ rule, value: out.value });
  }
  for (const { rule, value: result } of results) {
    if (typeof result !== 'boolean') return 'validation expression must return a boolean';
    if (!result) return `validation expression '${rule.compiled.expression}' failed: ${rule.message}`;
  }
  return undefined;
}
