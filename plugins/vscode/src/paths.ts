/**
 * Where `specedit serve` listens, and whether a socket may be trusted. No `vscode` import.
 *
 * Contract:
 *  - `defaultSocketPath()` is the server's default (app/server/paths.py):
 *    $XDG_RUNTIME_DIR/specedit/rpc.sock when that variable is absolute, else
 *    <user cache>/specedit/run/rpc.sock with <user cache> = $XDG_CACHE_HOME when absolute, else
 *    ~/.cache (macOS: ~/Library/Caches). Never the shared temp dir. The tests keep the server,
 *    this module and the Neovim plugin in step.
 *  - `socketProblem(path)` applies the server's rule to the socket's directory: a real
 *    directory (not a symlink), owned by this user, mode 0700. It returns the reason in one
 *    line (the server's words), or null; an absent directory is no problem (nothing listens).
 *  - `readDiscovery()` reads the discovery file next to a socket (never from an unsafe dir).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface Discovery {
  socket: string;
  pid: number;
  protocolVersion: number;
  model: string;
  tcp?: { host: string; port: number; token: string };
}

/** "/a//b/" -> "/a/b", as Python's pathlib writes a path (no ".." resolution). */
function normPath(p: string): string {
  const q = p.replace(/\/+/g, '/');
  return q.length > 1 ? q.replace(/\/$/, '') : q;
}

/** The user's cache base, as the server's user_cache_home(): $XDG_CACHE_HOME when absolute,
 * else ~/.cache (macOS: ~/Library/Caches). */
export function userCacheHome(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && xdg.startsWith('/')) {
    return normPath(xdg);
  }
  const home = normPath(env.HOME ?? os.homedir());
  return platform === 'darwin' ? `${home}/Library/Caches` : `${home}/.cache`;
}

/** $XDG_RUNTIME_DIR/specedit/rpc.sock, else <user cache>/specedit/run/rpc.sock (as the server
 * computes it; never the shared temp dir). */
export function defaultSocketPath(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && xdg.startsWith('/')) {
    return `${normPath(xdg)}/specedit/rpc.sock`;
  }
  return normPath(`${userCacheHome(env, platform)}/specedit/run/rpc.sock`);
}

/** A socket the client will not connect to; `message` is one line, the server's words. */
export class UnsafeSocketError extends Error {
  readonly unsafeSocket = true;
}

/**
 * Why the directory of socket `socketPath` must not be trusted, or null when it is a real
 * directory owned by this user with mode 0700, or absent (then nothing listens there).
 */
export function socketProblem(socketPath: string): string | null {
  const dir = path.dirname(socketPath);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      return null;
    }
    return `cannot inspect the socket directory ${dir}: ${code ?? String(err)}`;
  }
  if (st.isSymbolicLink()) {
    return `the socket directory ${dir} is a symlink; refusing it`;
  }
  if (!st.isDirectory()) {
    return `the socket directory ${dir} is not a directory; refusing it`;
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : st.uid;
  if (st.uid !== uid) {
    return `the socket directory ${dir} belongs to uid ${st.uid}, not to you; refusing it`;
  }
  const mode = st.mode & 0o777;
  if (mode !== 0o700) {
    const octal = mode.toString(8).padStart(4, '0');
    return `the socket directory ${dir} has mode ${octal}, not 0700; refusing it (chmod 700 ${dir} if it is yours)`;
  }
  return null;
}

export function discoveryPath(socketPath: string): string {
  return socketPath.replace(/\.sock$/, '') + '.json';
}

export function readDiscovery(socketPath: string): Discovery | null {
  if (socketProblem(socketPath)) {
    return null;
  }
  try {
    return JSON.parse(fs.readFileSync(discoveryPath(socketPath), 'utf8')) as Discovery;
  } catch {
    return null;
  }
}

