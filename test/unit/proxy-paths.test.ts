/**
 * The pieces of kube's proxy that are pure functions, with the answers Go and kube-apiserver 1.36.4
 * give: Go's path cleaning and escaping, the Location and HTML link rewrites (pages kube-apiserver
 * rewrote),
 * SplitSchemeNamePort and IsGlobalUnicast.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanPath, escapePath, joinPreservingTrailingSlash } from '../../src/proxy/go-paths.js';
import { rewriteHtmlLinks } from '../../src/proxy/html-links.js';
import { rewriteLocation } from '../../src/proxy/location-rewrite.js';
import { forwardedResponseHeaders } from '../../src/proxy/proxy-headers.js';
import { isGlobalUnicast, splitSchemeNamePort } from '../../src/rest/proxy-locations.js';

test("Go's path.Clean, JoinPreservingTrailingSlash and URL path escaping", () => {
  assert.equal(cleanPath('/a/../b//c/./d/'), '/b/c/d');
  assert.equal(cleanPath('/../a'), '/a');
  assert.equal(cleanPath(''), '.');
  assert.equal(joinPreservingTrailingSlash('', '/a//b/'), '/a/b/');
  assert.equal(joinPreservingTrailingSlash('', '/'), '/');
  assert.equal(joinPreservingTrailingSlash('', ''), '');
  assert.equal(escapePath("/a b/c?d/%e/ü/$&+,:;=@-_.~!*'()"), '/a%20b/c%3Fd/%25e/%C3%BC/$&+,:;=@-_.~%21%2A%27%28%29');
});

test("a redirect's Location as kube rewrites it", () => {
  const prefix = '/api/v1/namespaces/default/pods/web/proxy';
  const rewrite = (location: string) => rewriteLocation(location, '192.0.2.2:18080', '127.0.0.1:6443', prefix);
  assert.equal(rewrite('/target/x?y=1'), `${prefix}/target/x?y=1`);
  assert.equal(rewrite('/target/'), `${prefix}/target/`);
  assert.equal(rewrite('http://127.0.0.1:6443/target/x?y=1'), `http://127.0.0.1:6443${prefix}/target/x?y=1`);
  assert.equal(rewrite('http://192.0.2.2:18080/target/x#f'), `${prefix}/target/x#f`);
  assert.equal(rewrite('target/x'), 'target/x');
  assert.equal(rewrite('http://other.example/x'), 'http://other.example/x');
  assert.equal(rewrite(`${prefix}/already`), `${prefix}/already`);
  assert.equal(rewrite('mailto:someone@example.com'), 'mailto:someone@example.com');
});

test("a backend's headers less hop-by-hop and CORS ones; an answer that says close keeps what Connection lists", () => {
  const raw = ['X-A', '1', 'Connection', 'X-A', 'Keep-Alive', 'timeout=5', 'Access-Control-Allow-Origin', '*', 'Set-Cookie', 'a', 'Set-Cookie', 'b'];
  assert.deepEqual(forwardedResponseHeaders(raw), ['Set-Cookie', 'a', 'Set-Cookie', 'b']);
  assert.deepEqual(forwardedResponseHeaders(['X-A', '1', 'Connection', 'X-A, close']), ['X-A', '1']);
});

test("apimachinery's SplitSchemeNamePort", () => {
  assert.deepEqual(splitSchemeNamePort('web'), { scheme: '', name: 'web', port: '' });
  assert.deepEqual(splitSchemeNamePort('web:8080'), { scheme: '', name: 'web', port: '8080' });
  assert.deepEqual(splitSchemeNamePort('web:'), { scheme: '', name: 'web', port: '' });
  assert.deepEqual(splitSchemeNamePort('https:web:http'), { scheme: 'https', name: 'web', port: 'http' });
  for (const bad of [':80', 'ftp:web:1', 'a:b:c:d', '', 'http::80']) assert.equal(splitSchemeNamePort(bad), undefined, bad);
});

test("Go's IsGlobalUnicast", () => {
  for (const ip of ['10.0.0.1', '192.0.2.2', '240.0.0.1', '010.001.002.003', '2001:db8::1', '::ffff:10.0.0.1', 'fd00::10.1.2.3'])
    assert.equal(isGlobalUnicast(ip), true, ip);
  for (const ip of [
    '',
    'web',
    '127.0.0.1',
    '0.0.0.0',
    '169.254.1.1',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '1.2.3.256',
  ])
    assert.equal(isGlobalUnicast(ip), false, ip);
});

test("an HTML page's links as kube-apiserver 1.36.4 rewrote the same page (tags written again as Go writes them)", () => {
  const prefix = '/api/v1/namespaces/default/pods/web/proxy';
  const page =
    '<a href="/a?x=1&copy=2&amp&ampx&lt3" title="&copy &#0; &#xD800; &#65; &Aacute &AElig;">a</a>\n<SCRIPT type=x>document.write(\'<a href="/in">\')</Script >\n<textarea><a href=/t></textarea><xmp><a href=/x></xmp>\n</><a/href="/sl"><a =weird="/w" href=\'/q\'>\n<img SRC = "/sp.png" >\n<a href="HTTP://192.0.2.2:18080/upper">u</a>\n<a href="?q=1">q</a><a href="#frag">f</a><a href="">e</a>\n<base href="/"><link rel=stylesheet href="/c.css"/>\n<a href="/api/v1/namespaces/default/pods/web/proxy">same</a>\n<div id=x class=\'a b\'>d</div>\n<a href="/t\n';
  const rewritten =
    '<a href="/api/v1/namespaces/default/pods/web/proxy/a?x=1&amp;copy=2&amp;&amp;ampx&amp;lt3" title="\u00a9 \ufffd \ufffd A \u00c1 \u00c6">a</a>\n<script type="x">document.write(\'<a href="/in">\')</Script >\n<textarea><a href=/t></textarea><xmp><a href=/x></xmp>\n</><a href="/api/v1/namespaces/default/pods/web/proxy/sl"><a =weird="/w" href="/api/v1/namespaces/default/pods/web/proxy/q">\n<img src="/api/v1/namespaces/default/pods/web/proxy/sp.png">\n<a href="/api/v1/namespaces/default/pods/web/proxy/upper">u</a>\n<a href="?q=1">q</a><a href="#frag">f</a><a href="">e</a>\n<base href="/api/v1/namespaces/default/pods/web/proxy/"><link rel="stylesheet" href="/api/v1/namespaces/default/pods/web/proxy/c.css"/>\n<a href="/api/v1/namespaces/default/pods/web/proxy">same</a>\n<div id="x" class="a b">d</div>\n';
  assert.equal(
    rewriteHtmlLinks(page, (url) => rewriteLocation(url, '192.0.2.2:18080', 'HOST', prefix)),
    rewritten,
  );
});
