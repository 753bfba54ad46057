/**
 * On Ctrl-C or SIGTERM: says what is being cleaned up, runs `cleanup` (servers stopped, bench databases dropped) and
 * exits 130. `forceExitAfterMs`: exit anyway after that long, for a clean-up that can hang on a server.
 */
export function onInterrupt(cleaningUp, cleanup, { forceExitAfterMs } = {}) {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      console.error(`\n${signal}: ${cleaningUp}…`);
      if (forceExitAfterMs !== undefined) setTimeout(() => process.exit(130), forceExitAfterMs).unref();
      void Promise.resolve()
        .then(cleanup)
        .finally(() => process.exit(130));
    });
  }
}
