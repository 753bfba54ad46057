import type { ComponentChildren, RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * Whether the element scrolls sideways. One that does must take focus, so a keyboard can scroll it (its content may
 * hold nothing focusable: a table of figures, a snippet); one that does not stays out of the tab order.
 */
export function useScrollsSideways<T extends HTMLElement>(): [RefObject<T>, boolean] {
  const ref = useRef<T>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const element = ref.current!;
    const measure = () => setScrolls(element.scrollWidth > element.clientWidth);
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    for (const child of Array.from(element.children)) observer.observe(child);
    measure();
    return () => observer.disconnect();
  }, []);
  return [ref, scrolls];
}

/** A wide table's box: it scrolls within the page on a narrow screen, and then is a named region a keyboard can scroll. */
export function ScrollBox({ label, children }: { label: string; children: ComponentChildren }) {
  const [ref, scrolls] = useScrollsSideways<HTMLDivElement>();
  return (
    <div
      ref={ref}
      class="table-scroll"
      tabIndex={scrolls ? 0 : undefined}
      role={scrolls ? 'region' : undefined}
      aria-label={scrolls ? label : undefined}
    >
      {children}
    </div>
  );
}
