/**
 * The built-in signers kube-controller-manager's csrsigning controller serves, and what each accepts
 * of a request (kube's pkg/controller/certificates/signer and pkg/apis/certificates helpers): a
 * refusal is the message kube writes into the CSR's Failed condition.
 */
import type * as X509 from '@peculiar/x509';
import { x509 } from './x509-module.js';

export const KUBE_APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';
export const KUBE_APISERVER_CLIENT_KUBELET = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING = 'kubernetes.io/kubelet-serving';
export const LEGACY_UNKNOWN = 'kubernetes.io/legacy-unknown';

/** The signers Capstan signs for. */
export const BUILT_IN_SIGNERS: readonly string[] = [KUBE_APISERVER_CLIENT, KUBE_APISERVER_CLIENT_KUBELET, KUBELET_SERVING, LEGACY_UNKNOWN];

/** kube's required usage sets (with and without key encipherment, for non-RSA keys), sorted as kube prints them. */
const KUBELET_SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];
const KUBELET_CLIENT_USAGES = ['client auth', 'digital signature', 'key encipherment'];

function sameSet(actual: readonly string[], expected: readonly string[]): boolean {
  const a = new Set(actual);
  const e = new Set(expected);
  return a.size === e.size && [...a].every((u) => e.has(u));
}

function withoutKeyEncipherment(usages: readonly string[]): string[] {
  return usages.filter((u) => u !== 'key encipherment');
}

/** The SAN kinds a request asks for. */
function sans(csr: X509.Pkcs10CertificateRequest): { dns: number; ip: number; email: number; uri: number } {
  const out = { dns: 0, ip: 0, email: 0, uri: 0 };
  const ext = subjectAltNames(csr);
  for (const n of ext?.names.items ?? []) {
    if (n.type === 'dns') out.dns++;
    else if (n.type === 'ip') out.ip++;
    else if (n.type === 'email') out.email++;
    else if (n.type === 'url') out.uri++;
  }
  return out;
}

/** The request's subjectAltName extension, if any. */
export function subjectAltNames(csr: X509.Pkcs10CertificateRequest): X509.SubjectAlternativeNameExtension | undefined {
  const ext = csr.extensions.find((e) => e.type === '2.5.29.17');
  return ext === undefined ? undefined : new (x509().SubjectAlternativeNameExtension)(ext.rawData);
}

function organizations(csr: X509.Pkcs10CertificateRequest): string[] {
  return csr.subjectName.getField('O');
}

function commonName(csr: X509.Pkcs10CertificateRequest): string {
  return csr.subjectName.getField('CN')[0] ?? '';
}

/** The request's subject groups (O) and user (CN), as the client certificate authenticator reads them. */
export function subjectOf(csr: X509.Pkcs10CertificateRequest): { user: string; groups: string[] } {
  return { user: commonName(csr), groups: organizations(csr) };
}

function isSystemNodes(csr: X509.Pkcs10CertificateRequest): boolean {
  const o = organizations(csr);
  return o.length === 1 && o[0] === 'system:nodes';
}

/** kube's ValidateKubeletServingCSR. */
function kubeletServing(csr: X509.Pkcs10CertificateRequest, usages: readonly string[]): string | undefined {
  if (!isSystemNodes(csr)) return 'subject organization is not system:nodes';
  const s = sans(csr);
  if (s.dns === 0 && s.ip === 0) return 'DNS or IP subjectAltName is required';
  if (s.email > 0) return 'Email subjectAltNames are not allowed';
  if (s.uri > 0) return 'URI subjectAltNames are not allowed';
  if (!sameSet(usages, KUBELET_SERVING_USAGES) && !sameSet(usages, withoutKeyEncipherment(KUBELET_SERVING_USAGES)))
    return `usages did not match [${KUBELET_SERVING_USAGES.join(' ')}]`;
  if (!commonName(csr).startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  return undefined;
}

/** kube's ValidateKubeletClientCSR. */
function kubeletClient(csr: X509.Pkcs10CertificateRequest, usages: readonly string[]): string | undefined {
  if (!isSystemNodes(csr)) return 'subject organization is not system:nodes';
  const s = sans(csr);
  if (s.dns > 0) return 'DNS subjectAltNames are not allowed';
  if (s.email > 0) return 'Email subjectAltNames are not allowed';
  if (s.ip > 0) return 'IP subjectAltNames are not allowed';
  if (s.uri > 0) return 'URI subjectAltNames are not allowed';
  if (!commonName(csr).startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  if (!sameSet(usages, KUBELET_CLIENT_USAGES) && !sameSet(usages, withoutKeyEncipherment(KUBELET_CLIENT_USAGES)))
    return `usages did not match [${KUBELET_CLIENT_USAGES.join(' ')}]`;
  return undefined;
}

/** kube's validAPIServerClientUsages: client auth required, digital signature and key encipherment optional. */
function apiserverClient(usages: readonly string[]): string | undefined {
  let clientAuth = false;
  for (const u of usages) {
    if (u === 'client auth') clientAuth = true;
    else if (u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`;
  }
  return clientAuth ? undefined : 'missing required usage for client certificate: client auth';
}

/**
 * Why `signerName` refuses the request (kube's message), or undefined when it signs it. Only
 * BUILT_IN_SIGNERS are asked; legacy-unknown accepts everything, as in kube.
 */
export function signerRefusal(signerName: string, csr: X509.Pkcs10CertificateRequest, usages: readonly string[]): string | undefined {
  switch (signerName) {
    case KUBELET_SERVING:
      return kubeletServing(csr, usages);
    case KUBE_APISERVER_CLIENT_KUBELET:
      return kubeletClient(csr, usages);
    case KUBE_APISERVER_CLIENT:
      return apiserverClient(usages);
    default:
      return undefined;
  }
}
