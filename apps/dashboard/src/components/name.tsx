import type { ComponentChildren } from 'preact';

/**
 * A name a server, tool or agent chose (anything: an Arabic name, a stray U+202E override), isolated from the text
 * around it: an override left open in `billing\u202e` would otherwise run on to the end of the line and show the tool
 * name after it backwards. `<bdi>` isolates it (unicode-bidi: isolate) and takes its direction from its own text.
 */
export function Name({ children, class: className }: { children: ComponentChildren; class?: string }) {
  return <bdi class={className}>{children}</bdi>;
}

/** "server / tool", each name isolated; a call whose server gave no name shows "unknown server". */
export function ServerTool({ server, tool }: { server: string | null | undefined; tool: string }) {
  return (
    <>
      <Name class="server">{server ?? 'unknown server'}</Name> / <Name>{tool}</Name>
    </>
  );
}
