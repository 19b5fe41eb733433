/**
 * Starting `specedit serve` when none answers, free of any `vscode` import (node tests it).
 *
 * Contract:
 *  - `serverCommand(settings)` is the command line: `settings.command`, then `--socket` (only
 *    when the socket was set explicitly), `--model`, `--gpu-layers`, `--backend`, `--device`
 *    and `--quant`, each only when set.
 *  - `startServer(settings, socket, hooks)` spawns it detached (it outlives the editor, for the
 *    next one), sends its stderr line by line to `hooks.onStderr` (an output channel), and
 *    resolves with a connected client once the socket answers. It rejects at once, with one
 *    clear line, when the command cannot be spawned (a missing `specedit`: the 'error'
 *    event), when the server exits before it listens (its last "error:" line), or when the
 *    socket's directory is unsafe (then nothing is spawned); else after `timeoutMs`.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { SpeceditClient } from './client';
import { socketProblem, UnsafeSocketError } from './paths';

export interface ServerSettings {
  /** the command, e.g. ['specedit', 'serve'] */
  command: string[];
  /** an explicitly configured socket (passed as --socket); null: the server's default */
  socket?: string | null;
  model?: string | null;
  /** --gpu-layers: a layer count, 'all' or 'auto' */
  gpuLayers?: string | number | null;
  /** --backend: 'llama.cpp', 'torch' or 'auto' */
  backend?: string | null;
  /** --device: the torch device ('cuda', 'cuda:1', 'cpu') */
  device?: string | null;
  /** --quant: torch weight quantization ('int4', 'int8', 'none') */
  quant?: string | null;
}

export interface StartHooks {
  onStderr?: (line: string) => void;
  timeoutMs?: number;
  pollMs?: number;
  env?: NodeJS.ProcessEnv;
}

export function serverCommand(s: ServerSettings): { file: string; args: string[] } {
  if (s.command.length === 0 || !s.command[0]) {
    throw new Error('specedit.command is empty');
  }
  const args = s.command.slice(1);
  const flags: Array<[string, unknown]> = [
    ['--socket', s.socket],
    ['--model', s.model],
    ['--gpu-layers', s.gpuLayers],
    ['--backend', s.backend],
    ['--device', s.device],
    ['--quant', s.quant],
  ];
  for (const [flag, value] of flags) {
    if (value !== null && value !== undefined && value !== '') {
      args.push(flag, String(value));
    }
  }
  return { file: s.command[0], args };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The server's last "error: …" message (joined if it was wrapped), else its last line. */
export function lastError(lines: string[]): string | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i].startsWith('error:')) {
      return lines.slice(i).join(' ').replace(/\s+/g, ' ').trim();
    }
  }
  const last = [...lines].reverse().find((l) => l.trim());
  return last ? last.trim() : null;
}

export async function startServer(s: ServerSettings, socketPath: string, hooks: StartHooks = {}): Promise<SpeceditClient> {
  const problem = socketProblem(socketPath);
  if (problem) {
    throw new UnsafeSocketError(problem); // no server is started for a socket we would refuse
  }
  const { file, args } = serverCommand(s);
  const lines: string[] = [];
  let failure: string | null = null;
  let partial = '';
  let child: ChildProcess;
  try {
    child = spawn(file, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: hooks.env ?? process.env });
  } catch (err) {
    throw new Error(`cannot start the server (${file}): ${err instanceof Error ? err.message : String(err)}`);
  }
  child.on('error', (err: NodeJS.ErrnoException) => {
    const why = err.code === 'ENOENT' ? 'not found' : err.code === 'EACCES' ? 'not executable' : err.message;
    failure ??= `cannot start the server: ${file}: ${why} (set specedit.command to the specedit executable)`;
  });
  // 'close' comes after the process ended and its stderr was read to the end
  child.on('close', (code, signal) => {
    if (partial) {
      lines.push(partial);
      hooks.onStderr?.(partial);
      partial = '';
    }
    failure ??= `the server exited (${signal ? `signal ${signal}` : `status ${code}`}): ${lastError(lines) ?? 'no output'}`;
  });
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      if (lines.length > 200) {
        lines.shift();
      }
      hooks.onStderr?.(line);
    }
  });
  const deadline = Date.now() + (hooks.timeoutMs ?? 300_000);
  for (;;) {
    if (failure) {
      throw new Error(failure);
    }
    try {
      const client = await SpeceditClient.connect(socketPath, 2000);
      child.unref();
      (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
      return client;
    } catch (err) {
      if (err instanceof UnsafeSocketError) {
        throw err;
      }
    }
    if (Date.now() > deadline) {
      throw new Error(`the server did not come up on ${socketPath} within ${Math.round((hooks.timeoutMs ?? 300_000) / 1000)} s`);
    }
    await sleep(hooks.pollMs ?? 250);
  }
}
