#!/usr/bin/env node
// The one entry point that may call process.exit: everything below returns or throws.
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`voxpipe: internal_error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(70);
  },
);
