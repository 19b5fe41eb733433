/**
 * `specedit.ask`'s client side against a real `specedit serve` process over the scripted
 * model (tests/scripted_server.py: a prompt with a known question gets a known answer):
 *  - an answer quoting both context files (one sent as text, one read by the server from its
 *    path) comes back `done`, each citation found, and `formatAnswer` shows it with ✓;
 *  - a misquote (verbatim off, so the guard lets the model write it) shows ✗ and the problem;
 *  - the progress carries the whole text so far; cancel ends an answer `cancelled`;
 *  - bad params are refused with one clear message (-32602);
 *  - the command is in package.json.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { AnswerProgress, errorCode, SpeceditClient } from '../src/client';
import { formatAnswer, formatCitation } from '../src/format';
import { EXT, startScripted, Toy } from './helpers';

const A = '# Releasing\n\nRun make release from the main branch.\nTag the commit with the version.\n';
const B = '# Testing\n\nRun make test before a release.\n';
const Q_GOOD = 'How is a release made?';
const GOOD =
  'With make, after the tests.\n\n' +
  '[a.md]\n```\nRun make release from the main branch.\n```\n\n' +
  '[b.md]\n```\nRun make test before a release.\n```\n';
const Q_BAD = 'Which branch?';
const BAD = 'Any.\n\n[a.md:L3]\n```\nRun make release from any branch.\n```\n';
const Q_LONG = 'Tell me everything.';
const LONG = 'Everything: ' + 'and more, '.repeat(3000);

describe('answer/start against specedit serve over the scripted model', { timeout: 120_000 }, () => {
  let dir: string;
  let server: Toy;
  let client: SpeceditClient;
  let bFile: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'specedit-ask-'));
    bFile = path.join(dir, 'b.md');
    fs.writeFileSync(bFile, B);
    server = await startScripted(dir, [
      [Q_GOOD, GOOD],
      [Q_BAD, BAD],
      [Q_LONG, LONG],
    ]);
    client = server.client;
    assert.equal((await client.initialize('node-test', '1')).model, 'scripted');
  });

  after(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('quotes of both files are found and shown with ✓', async () => {
    const progress: AnswerProgress[] = [];
    const handle = client.ask(
      // verbatim off: the guard (app/answer/quote_guard.py) is the model's business, not the client's
      { question: Q_GOOD, contextFiles: [{ path: path.join(dir, 'a.md'), text: A }, { path: bFile }], verbatim: false },
      (p) => progress.push(p),
    );
    const done = await handle.done;
    assert.equal(done.status, 'done', done.message);
    assert.equal(done.output, GOOD);
    assert.equal(done.quotesFound, true);
    assert.deepEqual(
      done.citations.map((c) => [c.file, c.found, c.source]),
      [
        ['a.md', true, path.join(dir, 'a.md')],
        ['b.md', true, bFile],
      ],
    );
    assert.equal(progress[progress.length - 1].text, GOOD);
    assert.equal(
      formatAnswer(Q_GOOD, done),
      `Q: ${Q_GOOD}\n\n${GOOD.replace(/\n+$/, '')}\n\n✓ a.md:L3\n✓ b.md:L3\n`,
    );
    assert.equal(formatAnswer(Q_GOOD, progress[progress.length - 1]), `Q: ${Q_GOOD}\n\n${GOOD}`);
  });

  test('a misquote is shown with ✗ and the problem', async () => {
    const done = await client.ask({ question: Q_BAD, contextFiles: [{ path: 'a.md', text: A }], verbatim: false }).done;
    assert.equal(done.status, 'done', done.message);
    assert.equal(done.quotesFound, false);
    const [c] = done.citations;
    assert.equal(c.found, false);
    assert.ok(c.problem.length > 0);
    assert.equal(formatCitation(c), `✗ a.md:L3: ${c.problem}`);
    assert.ok(formatAnswer(Q_BAD, done).endsWith(`\n\n✗ a.md:L3: ${c.problem}\n`));
  });

  test('cancel ends an answer cancelled', async () => {
    // 30,000 tokens: the scripted model takes minutes over them (each call rereads its cache)
    const handle = client.ask({ question: Q_LONG, contextFiles: [{ path: 'a.md', text: A }], maxTokens: 30_000 });
    await handle.started;
    await handle.cancel();
    const done = await handle.done;
    assert.equal(done.status, 'cancelled');
    assert.equal(done.output, null);
    assert.deepEqual(done.citations, []);
    assert.equal(formatAnswer(Q_LONG, done), `Q: ${Q_LONG}\n\n(cancelled: ${done.message})\n`);
  });

  test('bad params get one clear message', async () => {
    const bad: Array<[object, RegExp]> = [
      [{ contextFiles: [{ path: 'a.md', text: A }] }, /question must be/],
      [{ question: 'q', contextFiles: [] }, /contextFiles must be/],
      [{ question: 'q', contextFiles: [{ path: 'a.md', text: A }], style: 'poem' }, /style must be "quote" or "free"/],
      [{ question: 'q', contextFiles: [{ path: 'rel.md' }] }, /absolute/],
    ];
    for (const [params, words] of bad) {
      await assert.rejects(client.ask(params as never).done, (err: unknown) => {
        assert.equal(errorCode(err), -32602);
        assert.match((err as Error).message, words);
        return true;
      });
    }
  });

  test('package.json contributes specedit.ask', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(EXT, 'package.json'), 'utf8'));
    const cmd = manifest.contributes.commands.find((c: { command: string }) => c.command === 'specedit.ask');
    assert.equal(cmd?.title, 'Ask About Open Files');
  });
});
