import { fileURLToPath } from 'node:url';

/** The dataset shipped in `data/` (see data/README.md for sources and licences): one source argument. */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL('../../data/', import.meta.url)).replace(/\/$/, '');
