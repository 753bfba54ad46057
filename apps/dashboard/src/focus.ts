/**
 * Keyboard focus across a navigation that stays on the page (a filter, a grouping, a pager, another run of the
 * trace), or a retry (Try again, Load them again): the view is drawn anew, and the control that was used goes with it.
 * Focus goes back to the control of the same id, or else the same kind, text and label, once it is drawn (after the
 * data, for one in the view); until then, or when it is not drawn again (a retry that worked), it waits on `fallback`
 * (by default the content, `main`) rather than fall to the page's body.
 */
const GIVE_UP_MS = 10_000;

let stop: (() => void) | null = null;

export function keepFocus(fallback = 'main'): void {
  stop?.();
  const used = document.activeElement;
  if (!(used instanceof HTMLElement) || used === document.body || used.id === 'main') return;
  const waiting = (element: EventTarget | null) =>
    element instanceof HTMLElement && (element.id === 'main' || element.id === fallback);
  const same = (element: Element): boolean =>
    element !== used &&
    (used.id !== ''
      ? element.id === used.id
      : element.textContent === used.textContent &&
        element.getAttribute('aria-label') === used.getAttribute('aria-label'));
  const restore = () => {
    if (used.isConnected) return;
    const match = Array.from(document.getElementsByTagName(used.tagName)).find(same);
    if (match instanceof HTMLElement && !match.hasAttribute('disabled')) {
      match.focus();
      stop?.();
    } else if (document.activeElement === document.body || document.activeElement === null) {
      (document.getElementById(fallback) ?? document.getElementById('main'))?.focus({ preventScroll: true });
    }
  };
  // The reader moving focus on their own ends the wait.
  const moved = (event: FocusEvent) => {
    if (event.target instanceof HTMLElement && !waiting(event.target)) stop?.();
  };
  const observer = new MutationObserver(restore);
  observer.observe(document.body, {
    childList: true,
    subtree: true,
    attributes: true,
    attributeFilter: ['disabled'],
  });
  const timer = setTimeout(() => stop?.(), GIVE_UP_MS);
  document.addEventListener('focusin', moved);
  stop = () => {
    observer.disconnect();
    clearTimeout(timer);
    document.removeEventListener('focusin', moved);
    stop = null;
  };
}
