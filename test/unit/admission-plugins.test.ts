/**
 * `--enable-admission-plugins` / `--disable-admission-plugins`: kube's names, defaults and errors, and
 * the chain they leave (src/admission/admission-plugins.ts, src/cli/flags.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { admissionChain, enabledAdmissionPluginNames } from '../../src/admission/admission-plugins.js';
import { parseArgs } from '../../src/cli/flags.js';

test("kube's defaults, plus enabled, less disabled, in kube's order", () => {
  const names = enabledAdmissionPluginNames(['AlwaysPullImages'], ['Priority']);
  assert.ok(names.includes('NamespaceLifecycle'));
  assert.ok(!names.includes('Priority'));
  assert.ok(names.indexOf('AlwaysPullImages') < names.indexOf('MutatingAdmissionWebhook'));
  assert.ok(names.indexOf('MutatingAdmissionWebhook') < names.indexOf('ValidatingAdmissionPolicy'));
  assert.ok(names.indexOf('ValidatingAdmissionWebhook') < names.indexOf('ResourceQuota'));
  assert.ok(!enabledAdmissionPluginNames([], []).includes('AlwaysDeny'));
});

test("the chain keeps the enabled plugins and those whose names are not kube's", () => {
  const plugin = (name: string) => ({ name });
  const chain = admissionChain(
    [plugin('NamespaceLifecycle'), plugin('Priority'), plugin('CapstanOwn'), plugin('ValidatingAdmissionWebhook')],
    [],
    ['Priority', 'ValidatingAdmissionWebhook'],
  );
  assert.deepEqual(
    chain.map((p) => p.name),
    ['NamespaceLifecycle', 'CapstanOwn'],
  );
});

test("flags: unknown names and overlaps are refused with kube's words", () => {
  const ok = parseArgs(['--enable-admission-plugins=AlwaysPullImages,PodNodeSelector', '--disable-admission-plugins', 'MutatingAdmissionWebhook']);
  assert.equal(ok.help, false);
  if (!ok.help) {
    assert.deepEqual(ok.config.enableAdmissionPlugins, ['AlwaysPullImages', 'PodNodeSelector']);
    assert.deepEqual(ok.config.disableAdmissionPlugins, ['MutatingAdmissionWebhook']);
  }
  assert.throws(() => parseArgs(['--enable-admission-plugins=Foo']), {
    message: 'invalid argument "Foo" for "--enable-admission-plugins" flag: enable-admission-plugins plugin "Foo" is unknown',
  });
  assert.throws(() => parseArgs(['--enable-admission-plugins=Priority,ResourceQuota', '--disable-admission-plugins=ResourceQuota,Priority']), {
    message: '[Priority ResourceQuota] in enable-admission-plugins and disable-admission-plugins overlapped',
  });
});
