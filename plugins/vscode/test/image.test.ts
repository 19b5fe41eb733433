/**
 * The review state behind the README's VS Code image (docs/vscode.svg), from a real rewrite:
 * `specedit serve` over the scripted toy (tests/toy_server.py) rewrites the sample of
 * tests/editor_sample.json, and the extension's own code computes what the editor shows in
 * the review: the decorations (removed lines, the added text after its anchor line), the
 * CodeLenses, the notification and the status-bar text. With $SPECEDIT_VSCODE_STATE set the
 * state is written there as JSON (tests/test_docs_images.py renders it as an SVG; VS Code
 * itself is not run).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { formatDone, formatStatus, reviewLenses } from '../src/format';
import { addedText, Review, splitLines } from '../src/review';
import { REPO, startToy } from './helpers';

const SAMPLE = JSON.parse(fs.readFileSync(path.join(REPO, 'tests', 'editor_sample.json'), 'utf8'));

test('the review state of a real rewrite, as the editor shows it', { timeout: 120_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'specedit-image-'));
  const toy = await startToy(dir, SAMPLE.new + '```\n');
  try {
    const init = await toy.client.initialize('node-image', '1');
    const file = path.join(dir, SAMPLE.file);
    fs.writeFileSync(file, SAMPLE.text);
    const done = await toy.client.rewrite({
      text: SAMPLE.text, instruction: SAMPLE.instruction, path: file, options: { edit: 'whole' },
    }).done;
    assert.equal(done.status, 'ok', done.message);
    assert.equal(done.output, SAMPLE.new);
    const review = new Review(SAMPLE.text, done.hunks, { truncated: false, suspect: done.suspect ?? null });
    const lines = splitLines(review.current).map((l) => l.replace(/\n$/, ''));
    const decorations = review.decorations().map((d) => ({ ...d, text: addedText(d) }));
    const lenses = reviewLenses(review, lines.length);
    const notice = formatDone(done);
    const status = formatStatus({
      server: 'connected', model: init.model,
      review: { pending: review.pending().length, truncated: false, suspect: review.suspect !== null },
    });
    // the review: the document keeps its text; each hunk is drawn, with its lenses
    assert.deepEqual(lines, SAMPLE.text.replace(/\n$/, '').split('\n'));
    assert.equal(done.hunks.length, 3);
    assert.deepEqual(decorations.map((d) => d.text), [
      '  + class Stock:', '  + def add(self, name: str, qty: int) -> None:', '  + """The number of items in stock."""',
    ]);
    assert.deepEqual(lenses.map((l) => l.title).slice(0, 3), ['specedit: Accept all', 'Reject all', 'Show diff']);
    assert.equal(lenses.filter((l) => l.command === 'specedit.accept').length, 3);
    assert.match(notice.text, /^3 hunk\(s\), \d+\.\d tok\/s, toy on CPU, verifier numpy, edit whole$/);
    assert.equal(status.text, '$(diff) specedit: 3 hunk(s) to review');
    const out = process.env.SPECEDIT_VSCODE_STATE;
    if (out) {
      const state = { file: SAMPLE.file, lines, decorations, lenses, notice, status: status.text };
      fs.writeFileSync(out, JSON.stringify(state, null, 2));
    }
  } finally {
    await toy.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
