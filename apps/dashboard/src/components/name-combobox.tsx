import { useEffect, useState } from 'preact/hooks';
import type { Params } from '../api';
import { counted, formatCount } from '../format';
import { useApi } from '../use-api';
import { Name } from './name';

/** `GET /api/v1/names`: the server and tool names of the window's calls and its agents, each list cut at `limit`. */
export interface CallNames {
  readonly limit: number;
  readonly search: string | null;
  readonly serverCount: number;
  /** null: the calls whose server did not say its name. */
  readonly servers: readonly (string | null)[];
  readonly toolCount: number;
  readonly tools: readonly string[];
  readonly agentCount: number;
  /** Each by its name, or its id when it has none: what the `agent` filter selects it by. */
  readonly agents: readonly string[];
}

/** One of the lists of an answer of `GET /names`, and how many names it has in all (it is cut at `limit`). */
export interface NameList {
  readonly names: readonly string[];
  readonly count: number;
}

/** How long typing pauses before the names are searched: one request per pause, not one per key. */
export const SEARCH_DELAY_MS = 250;

/** `value`, once it has stayed the same for `delayMs`. */
function useSettled<T>(value: T, delayMs: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}

/**
 * A server, tool or agent filter: a combobox (WAI-ARIA's editable combobox with a list popup, manual selection). A
 * project can have thousands of names and `GET /names` lists 1,000 of them: a select offered only those, and found one
 * only by its first letters. Typed text is searched for by the API (`search`, any part of a name, any case) once the
 * typing pauses, so any name can be reached; the list says how many more there are when it is cut. Arrow keys move
 * through the list (opening it), Enter chooses, Escape closes it and puts back the chosen name. The choice goes into
 * the URL's parameter (`name`), as the select's did, so links stay as they were. Names are isolated (`<bdi>`) and wrap.
 */
export function NameCombobox(props: {
  /** The URL parameter; the input's id is `filter-<name>`. */
  readonly name: 'server' | 'tool' | 'agent';
  readonly label: string;
  /** The first choice, which filters nothing ("All tools"). */
  readonly everything: string;
  /** What the list holds, singular and plural: ["tool", "tools"]. */
  readonly what: readonly [singular: string, plural: string];
  /** The window's names without a search (the filter bar's request): null while they load or when they failed. */
  readonly listed: NameList | null;
  /** The window (and server) `GET /names` is asked about when the user types. */
  readonly params: Params;
  /** This filter's list out of an answer of `GET /names`. */
  readonly pick: (names: CallNames) => NameList;
  readonly value: string | null;
  readonly onChange: (name: string | null) => void;
}) {
  const id = `filter-${props.name}`;
  const listId = `${id}-list`;
  // null: not being typed in, the input shows the chosen name.
  const [text, setText] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  // The option the arrow keys are on (aria-activedescendant); -1: none, Enter chooses nothing.
  const [active, setActive] = useState(-1);
  const typed = text ?? '';
  const search = useSettled(typed, SEARCH_DELAY_MS);
  const searching = open && search !== '';
  const found = useApi<CallNames>(searching ? '/api/v1/names' : null, { ...props.params, search });

  const settled = search === typed;
  const list: NameList | null =
    typed === '' ? props.listed : settled && found.state === 'ready' ? props.pick(found.data) : null;
  // A name in the URL that the window does not list (a link from another week) is offered all the same, chosen.
  const names =
    list === null
      ? []
      : typed === '' && props.value !== null && !list.names.includes(props.value)
        ? [...list.names, props.value].sort()
        : list.names;
  const options: readonly (string | null)[] = [null, ...names];

  useEffect(() => {
    if (active >= 0) document.getElementById(`${id}-option-${active}`)?.scrollIntoView({ block: 'nearest' });
  }, [active, id]);
  // Another list (the search's answer came) has other options: the arrow keys start over.
  const listKey = typed === '' ? null : `${found.state} ${search}`;
  useEffect(() => setActive(-1), [listKey]);

  const close = () => {
    setOpen(false);
    setActive(-1);
    setText(null);
  };
  const choose = (value: string | null) => {
    close();
    if (value !== props.value) props.onChange(value);
  };
  const onKeyDown = (event: KeyboardEvent) => {
    const last = options.length - 1;
    const current = options.indexOf(props.value);
    switch (event.key) {
      case 'ArrowDown':
        event.preventDefault();
        if (!open || event.altKey) {
          setOpen(true);
          if (!event.altKey) setActive(typed === '' ? current : 0);
        } else setActive(Math.min(active + 1, last));
        return;
      case 'ArrowUp':
        event.preventDefault();
        if (!open) {
          setOpen(true);
          setActive(typed === '' ? current : last);
        } else setActive(Math.max(active - 1, 0));
        return;
      case 'Enter':
        // Never the form's submit, which applies a custom range.
        event.preventDefault();
        if (open && active >= 0 && active <= last) choose(options[active]!);
        return;
      case 'Escape':
        if (open || text !== null) {
          event.preventDefault();
          close();
        }
        return;
    }
  };

  const status = ((): string => {
    if (typed !== '' && (!settled || found.state === 'loading')) return `Searching the ${props.what[1]}…`;
    if (typed !== '' && found.state === 'error') return `The ${props.what[1]} could not be searched.`;
    if (list === null) return `The ${props.what[1]} are not loaded.`;
    if (typed === '') {
      return list.count > list.names.length
        ? `${formatCount(list.names.length)} of ${counted(list.count, ...props.what)} listed: type to narrow.`
        : `${counted(list.count, ...props.what)}.`;
    }
    return list.count === 0
      ? `No ${props.what[0]} contains “${typed}”.`
      : `${counted(list.count, ...props.what)} ${list.count === 1 ? 'contains' : 'contain'} “${typed}”.`;
  })();
  const more = list === null ? 0 : list.count - list.names.length;

  return (
    <div class="field combobox">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type="text"
        role="combobox"
        autocomplete="off"
        spellcheck={false}
        aria-autocomplete="list"
        aria-expanded={open}
        aria-controls={listId}
        aria-activedescendant={open && active >= 0 ? `${id}-option-${active}` : undefined}
        aria-describedby={`${id}-status`}
        placeholder={props.everything}
        title={props.value ?? undefined}
        value={text ?? props.value ?? ''}
        onInput={(event) => {
          setText(event.currentTarget.value);
          setOpen(true);
          setActive(-1);
        }}
        onClick={() => setOpen(!open)}
        onKeyDown={onKeyDown}
        onBlur={close}
      />
      <p id={`${id}-status`} class="visually-hidden" role="status">
        {open ? status : ''}
      </p>
      {/* Rendered closed too, empty, so that aria-controls names an element; a mouse-down keeps focus in the input. */}
      <div class="combobox-popup" hidden={!open} onMouseDown={(event) => event.preventDefault()}>
        <ul id={listId} role="listbox" aria-label={`${props.label} filter`}>
          {open &&
            options.map((option, i) => (
              <li
                key={option ?? ''}
                id={`${id}-option-${i}`}
                role="option"
                aria-selected={option === props.value}
                class={i === active ? 'active' : undefined}
                title={option ?? undefined}
                data-name={option ?? ''}
                onClick={() => choose(option)}
              >
                {option === null ? props.everything : <Name>{option}</Name>}
              </li>
            ))}
        </ul>
        {open && more > 0 && (
          <p class="combobox-more" data-cut={more}>
            {formatCount(more)} more — type to narrow
          </p>
        )}
        {open && list === null && <p class="combobox-more">{status}</p>}
      </div>
    </div>
  );
}
