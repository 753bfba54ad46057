/**
 * Names and texts Errata shows come from spans, any text a server or agent chose. Printed as they are, a terminal
 * runs their control sequences (ESC ] sets the window title, ESC [2J clears the screen, a line break forges an output
 * line) and a bidi override turns the text around it backwards (in a terminal, a tracker's Markdown, a code block).
 * `escapeControls` writes each such character as a JavaScript escape (`\u001b`), which is visible and, inside a JSON
 * or JavaScript string literal, means the same character: C0 (U+0000–001F, line breaks included), DEL and C1
 * (U+007F–009F), and the bidi controls (U+061C, U+200E/200F, U+202A–202E, U+2066–2069). Pure.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (control) => `\\u${control.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
