/**
 * The tag of a container image reference, as kube's defaulting reads it (parsers.ParseImageName over
 * the distribution reference grammar): `nginx` is `latest`, `nginx:1.27` is `1.27`, `nginx@sha256:...`
 * has no tag, and a reference the grammar refuses (`NGINX`, `nginx:`, ...) has none either.
 */

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const NAME = new RegExp(`^(?:(${DOMAIN})/)?(${COMPONENT}(?:/${COMPONENT})*)$`);
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;
const HEX64 = /^[a-f0-9]{64}$/;

/** The image's tag, `latest` when it has neither tag nor digest, '' when it has only a digest or does not parse. */
export function imageTag(image: string): string {
  let rest = image;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return '';
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) return '';
  }
  const match = NAME.exec(rest);
  if (match === null || rest.length > 255 || HEX64.test(rest)) return '';
  if (tag !== undefined) return tag;
  return digest === undefined ? 'latest' : '';
}
