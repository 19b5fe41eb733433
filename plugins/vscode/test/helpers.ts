/** Shared by the node tests: where the repository and its Python are, and a real
 * `specedit serve` over the scripted toy model (tests/toy_server.py: rewrites) or the
 * scripted model (tests/scripted_server.py: answers) to test against. */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SpeceditClient } from '../src/client';

export const EXT = path.resolve(__dirname, '..', '..');
export const REPO = path.resolve(EXT, '..', '..');

/** A client of the server ``server`` started on ``socket``, once it answers: tries every
 * ``pollMs`` until ``timeoutMs``; fails at once, naming ``label`` with its ``log()``, if the
 * server exits. */
export async function connectWhenUp(
  server: ChildProcess,
  socket: string,
  timeoutMs: number,
  pollMs: number,
  label: string,
  log: () => string,
): Promise<SpeceditClient> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (server.exitCode !== null) {
      throw new Error(`${label} exited (${server.exitCode}): ${log()}`);
    }
    try {
      return await SpeceditClient.connect(socket, 2000);
    } catch (err) {
      if (Date.now() > deadline) {
        throw err;
      }
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
}

/** The Python that runs specedit: $SPECEDIT_PYTHON, else the repository's venv. */
export const PYTHON = process.env.SPECEDIT_PYTHON || path.join(REPO, '.venv', 'bin', 'python');
export const TOY = path.join(REPO, 'tests', 'toy_server.py');
export const SCRIPTED = path.join(REPO, 'tests', 'scripted_server.py');

export interface Toy {
  server: ChildProcess;
  client: SpeceditClient;
  /** what the server wrote to stderr so far */
  stderr: () => string;
  /** shut the server down (through the client) and wait for it to exit */
  stop: () => Promise<void>;
}

/** Start `specedit serve` over the toy in `dir` (socket dir/run/rpc.sock) replying `script`
 * to every rewrite; `toyArgs` go before `serve` (--toy-gate, --toy-hold-at). Resolves once a
 * client is connected. */
export async function startToy(dir: string, script: string, toyArgs: string[] = []): Promise<Toy> {
  const scriptFile = path.join(dir, 'script.txt');
  fs.writeFileSync(scriptFile, script);
  return startServing(dir, [TOY, '--toy-script', scriptFile, ...toyArgs]);
}

/** Start `specedit serve` over the scripted model in `dir`: a prompt that contains a rule's
 * key (a question) gets the rule's answer. Resolves once a client is connected. */
export async function startScripted(dir: string, rules: Array<[string, string]>): Promise<Toy> {
  const rulesFile = path.join(dir, 'rules.json');
  fs.writeFileSync(rulesFile, JSON.stringify(rules));
  return startServing(dir, [SCRIPTED, '--scripted-rules', rulesFile]);
}

async function startServing(dir: string, front: string[]): Promise<Toy> {
  const socket = path.join(dir, 'run', 'rpc.sock');
  const server = spawn(
    PYTHON,
    [...front, 'serve', '--socket', socket, '--log-file', path.join(dir, 'server.log')],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SPECEDIT_STATE_DIR: path.join(dir, 'state') } },
  );
  let stderr = '';
  server.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = await connectWhenUp(server, socket, 60_000, 100, 'the toy server', () => stderr);
  const stop = async () => {
    if (!client.isClosed) {
      await client.shutdownServer().catch(() => undefined);
      client.dispose();
    }
    if (server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      const timer = setTimeout(() => server.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
  };
  return { server, client, stderr: () => stderr, stop };
}
