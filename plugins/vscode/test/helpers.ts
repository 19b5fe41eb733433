/** Shared by the node tests: where the repository and its Python are. */
import * as path from 'node:path';

export const EXT = path.resolve(__dirname, '..', '..');
export const REPO = path.resolve(EXT, '..', '..');
/** The Python that runs specedit: $SPECEDIT_PYTHON, else the repository's venv. */
export const PYTHON = process.env.SPECEDIT_PYTHON || path.join(REPO, '.venv', 'bin', 'python');
