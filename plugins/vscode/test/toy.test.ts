/**
 * The client, the review and the display strings against a real `specedit serve` process over
 * the scripted toy model (tests/toy_server.py: no weights, seconds). The toy replies to every
 * rewrite (edit mode `whole`) with the file's first function renamed and its line broken, and it holds its
 * prefill batch at position 128 until the test has seen that reading phase:
 *  - a cut result (maxTokens 20) is `truncated`: no accept-all, one hunk by hand, and
 *    rewrite/apply refuses it (-32803), even forced;
 *  - the whole reply is `ok` with a `suspect`: accept-all needs a confirmation, and
 *    rewrite/apply refuses it (-32804) unless forced;
 *  - the status bar's text from real progress: reading 128/N tokens, then the decode figures,
 *    with the backend and device;
 *  - every `specedit.edit` value is sent as options.edit and the server takes it (a rewrite
 *    starts: no -32602);
 *  - a server the extension starts gets --model/--gpu-layers/--backend/--device/--quant, and
 *    the real command line takes them (the toy logs the load config it was given).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Done, EditMode, errorCode, Progress, SpeceditClient, StartParams } from '../src/client';
import { formatDone, formatProgress, formatStatus } from '../src/format';
import { Review } from '../src/review';
import { serverCommand, startServer } from '../src/server';
import { EXT, PYTHON, startToy, TOY, Toy } from './helpers';

const TEXT = 'def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n';
// add renamed and its line broken: a suspect result (worse syntax); a dropped tail would be
// put back by the server's repairs (app/edit/repair.py)
const NEW = 'def plus(a, b):\n    return a +\n\n\ndef sub(a, b):\n    return a - b\n';
const INSTRUCTION = 'Rename the function add to plus';
// asks for more than the rename, so the toy's broken line is the model's change, not a stray one
// the rename repair would undo (a rename asked alone keeps nothing else: app/check/intent.py only_rename)
const MORE = 'Rename the function add to plus and fix its return';
const HOLD_AT = 128; // the second prefill batch (engine.prefill.CHUNK) of the ~360-token prompt

async function waitFor(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('against specedit serve over the scripted toy', { timeout: 120_000 }, () => {
  let dir: string;
  let gate: string;
  let toy: Toy;
  let client: SpeceditClient;
  let holds = 0;
  const progress: Progress[] = [];

  /** A rewrite whose held calls (at position 128) are released once that reading phase has
   * arrived (an edit mode answered in stages may read the file more than once). */
  async function rewrite(params: StartParams): Promise<Done> {
    const handle = client.rewrite(params, {
      onProgress: (p) => {
        progress.push(p);
        if (p.phase === 'reading' && (p.readTokens ?? 0) >= HOLD_AT) {
          const held = fs.readdirSync(gate).filter((f) => f.startsWith('held.')).length;
          for (; holds < held; holds++) {
            fs.writeFileSync(path.join(gate, `release.${holds + 1}`), '');
          }
        }
      },
    });
    return handle.done;
  }

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'specedit-toy-'));
    gate = path.join(dir, 'gate');
    fs.mkdirSync(gate);
    toy = await startToy(dir, NEW + '```\n', ['--toy-gate', gate, '--toy-hold-at', String(HOLD_AT)]);
    client = toy.client;
    assert.equal((await client.initialize('node-test', '1')).model, 'toy');
  });

  after(async () => {
    await toy?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a cut result: truncated, reviewed hunk by hunk, never applied', async () => {
    const file = path.join(dir, 't.py');
    fs.writeFileSync(file, TEXT);
    const done = await rewrite({ text: TEXT, instruction: INSTRUCTION, path: file, options: { edit: 'whole', maxTokens: 20 } });
    assert.equal(done.status, 'truncated', done.message);
    assert.equal(done.output, null);
    assert.deepEqual(
      done.hunks.map((h) => [h.startLine, h.endLine, h.newText]),
      [[0, 1, 'def plus(a, b):\n']],
    );
    const review = new Review(TEXT, done.hunks, { truncated: true, suspect: done.suspect ?? null });
    assert.match(review.acceptAllBlocked() ?? '', /truncated/i);
    assert.ok(review.accept(0));
    assert.ok(review.finished);
    assert.equal(review.current, 'def plus(a, b):\n' + TEXT.split('\n').slice(1).join('\n'));
    const note = formatDone(done);
    assert.ok(note.warning);
    assert.match(note.text, /^TRUNCATED: .*20-token output limit.*; 1 hunk\(s\).* of the completed part/);
    const bar = formatStatus({ server: 'connected', review: { pending: 1, truncated: true, suspect: false } });
    assert.equal(bar.text, '$(diff) specedit: 1 hunk(s) to review · TRUNCATED');
    for (const force of [false, true]) {
      await assert.rejects(client.apply(done.sessionId, file, undefined, force), (err: unknown) => errorCode(err) === -32803);
    }
    assert.equal(fs.readFileSync(file, 'utf8'), TEXT);
  });

  test('a suspect result: accept-all asks first, rewrite/apply writes it only forced', async () => {
    const file = path.join(dir, 's.py');
    fs.writeFileSync(file, TEXT);
    const done = await rewrite({ text: TEXT, instruction: MORE, path: file, options: { edit: 'whole' } });
    assert.equal(done.status, 'ok', done.message);
    assert.equal(done.output, NEW);
    assert.equal(done.suspect?.reason, 'syntax');
    assert.equal(done.suspect?.deletedLines, 0);
    const review = new Review(TEXT, done.hunks, { truncated: false, suspect: done.suspect ?? null });
    assert.equal(review.acceptAllBlocked(), null);
    assert.ok(review.needsConfirmation());
    const note = formatDone(done);
    assert.ok(note.warning && note.text.endsWith(`. WARNING: ${done.suspect?.message}`), note.text);
    const bar = formatStatus({ server: 'connected', review: { pending: done.hunks.length, truncated: false, suspect: true } });
    assert.match(bar.text, / · WARNING$/);
    await assert.rejects(client.apply(done.sessionId, file), (err: unknown) => errorCode(err) === -32804);
    assert.equal(fs.readFileSync(file, 'utf8'), TEXT);
    const res = await client.apply(done.sessionId, file, undefined, true);
    assert.equal(fs.readFileSync(file, 'utf8'), NEW);
    assert.ok(res.backup && fs.readFileSync(res.backup, 'utf8') === TEXT);
  });

  test('the status bar from real progress: reading, then generating, with backend and device', async () => {
    await rewrite({ text: TEXT, instruction: INSTRUCTION, path: 'p.py', options: { edit: 'whole' } });
    const reading = progress.filter((p) => p.phase === 'reading' && p.readTokens === HOLD_AT);
    assert.ok(reading.length >= 1, JSON.stringify(progress));
    for (const p of reading) {
      assert.ok((p.promptTokens ?? 0) > HOLD_AT);
      assert.match(formatProgress(p), /^reading file 128\/\d{3} tokens, \d+ tok\/s · toy on CPU, verifier numpy$/);
      assert.equal(formatStatus({ server: 'connected', progress: p }).text, `$(sync~spin) specedit: ${formatProgress(p)}`);
    }
    const generating = progress.filter((p) => p.phase === 'generating');
    assert.ok(generating.length >= 3, JSON.stringify(progress)); // one at least per rewrite
    const last = generating[generating.length - 1];
    assert.ok(last.generatedTokens > 0);
    assert.match(
      formatProgress(last),
      /^\d+ tok · \d+\.\d tok\/s · acceptance \d+% · \d+\.\d\d tok\/step · toy on CPU, verifier numpy$/,
    );
    assert.equal(holds, 3);
  });

  test('every specedit.edit value is sent as options.edit, and the server takes it', async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(EXT, 'package.json'), 'utf8'));
    const modes: EditMode[] = manifest.contributes.configuration.properties['specedit.edit'].enum.filter(
      (m: string | null) => m !== null,
    );
    assert.deepEqual(modes, ['auto', 'blocks', 'whole']);
    for (const edit of modes) {
      const done = await rewrite({ text: TEXT, instruction: INSTRUCTION, path: 'e.py', options: { edit, maxTokens: 8 } });
      assert.notEqual(done.status, 'cancelled');
      assert.doesNotMatch(done.message, /options\.edit/);
    }
  });
});

describe('a server the extension starts', { timeout: 120_000 }, () => {
  test('takes --model, --gpu-layers, --backend, --device and --quant', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'specedit-flags-'));
    const socket = path.join(dir, 'run', 'rpc.sock');
    const settings = {
      command: [PYTHON, TOY, 'serve'],
      socket,
      model: 'toy-model',
      gpuLayers: '0',
      backend: 'torch',
      device: 'cpu',
      quant: 'int8',
    };
    assert.deepEqual(serverCommand(settings).args.slice(2), [
      '--socket', socket, '--model', 'toy-model', '--gpu-layers', '0', '--backend', 'torch',
      '--device', 'cpu', '--quant', 'int8',
    ]);
    const lines: string[] = [];
    const client = await startServer(settings, socket, {
      timeoutMs: 60_000,
      onStderr: (l) => lines.push(l),
      env: { ...process.env, SPECEDIT_STATE_DIR: path.join(dir, 'state') },
    });
    try {
      assert.equal((await client.initialize('node-test', '1')).model, 'toy');
      const log = fs.readFileSync(path.join(dir, 'state', 'logs', 'server.log'), 'utf8');
      assert.ok(
        log.includes("toy in place of LoadConfig(model='toy-model', backend='torch', device='cpu', gpu_layers=0, quant='int8'"),
        log,
      );
    } finally {
      await client.shutdownServer().catch(() => undefined);
      client.dispose();
      await waitFor(() => !fs.existsSync(socket), 'the server to remove its socket');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
