/** Runs a `diag` call: a host logger that throws is the host's problem, never its tool call's or an export's. */
export function safeDiag(log: () => void): void {
  try {
    log();
  } catch {
    // nowhere left to report it
  }
}
