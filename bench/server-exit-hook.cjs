// Preloaded into the benchmarked server (`--require`) only when BENCH_SERVER_NODE_OPTIONS is set.
// Nest's shutdown hooks re-raise SIGTERM after closing the app, which kills the process without running Node's
// exit handlers, so --cpu-prof / --heap-prof would never write their files. The first SIGTERM/SIGINT is left
// to Nest (graceful drain); the re-raised one becomes a normal process.exit(0).
'use strict';
let signals = 0;
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    if (++signals >= 2) process.exit(0);
  });
}
