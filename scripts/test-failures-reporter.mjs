/**
 * A node:test reporter that prints, after the whole run, one line per failed test (file, name and the
 * first lines of its error). CI shows the tail of a long TAP log, so a failure named only in the middle
 * of it would otherwise go unseen.
 */
export default async function* failedTests(source) {
  const failed = [];
  for await (const event of source) if (event.type === 'test:fail') failed.push(event.data);
  if (failed.length === 0) return;
  yield `\n# ${failed.length} failed (suites count once per failed subtest):\n`;
  for (const f of failed) {
    const err = f.details?.error;
    const message = String(err?.cause?.message ?? err?.cause ?? err?.message ?? '')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .slice(0, 3)
      .map((line) => (line.length > 160 ? `${line.slice(0, 160)}...` : line))
      .join(' | ');
    const file = f.file !== undefined ? f.file.replace(`${process.cwd()}/`, '') : '';
    yield `# not ok: ${file} > ${f.name}: ${message}\n`;
  }
}
