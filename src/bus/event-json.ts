/**
 * The JSON text of events this process encoded to store them, kept beside the event objects
 * (which are not changed after they are stamped): the SSE frame of an event appended here uses
 * the text the log stored instead of encoding the event again. Weak: an entry lives as long as
 * its event object does.
 */
const texts = new WeakMap<object, string>();

export function rememberJson(event: object, json: string): void {
  texts.set(event, json);
}

/** The event's JSON: the stored text when this process encoded it, else encoded now. */
export function eventJson(event: object): string {
  return texts.get(event) ?? JSON.stringify(event);
}
