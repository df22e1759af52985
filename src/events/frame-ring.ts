/** An event serialised once as an SSE frame, shared by every client of its session. */
export interface Frame {
  id: string;
  sequence: number;
  type: string;
  /** The event's tags, for tag filters (absent when it has none). */
  tags?: readonly string[];
  /** The frame with the flowing `retry:` hint, written to every client as is. */
  text: string;
}

/**
 * The last frames of one session with contiguous sequences, at most `capacity` of them and
 * `maxChars` of text (large events must not make a watched session hold megabytes), in a
 * circular buffer (no array shifting per event). New frames go at the back; frames replayed from the log can
 * be added at the front while there is room, so the next client resuming from that far back
 * replays from memory instead of reading and serialising the same events again.
 */
export class FrameRing {
  /**
   * Grown on demand up to `capacity` (1, 2, 4 … slots, re-laid out from the head): a watched
   * session must not pay for 512 empty slots (4 KiB each, and at 1 follower per session there
   * is a watch per stream), nor a session with one event for eight.
   */
  #slots: (Frame | undefined)[] = [];
  #head = 0;
  #size = 0;
  #chars = 0;

  constructor(
    readonly capacity: number,
    readonly maxChars = Infinity,
  ) {}

  get size(): number {
    return this.#size;
  }

  /** Sequence of the oldest frame kept, or undefined when empty. */
  get firstSequence(): number | undefined {
    return this.#size ? this.#at(0).sequence : undefined;
  }

  /** Sequence of the newest frame kept, or undefined when empty. */
  get lastSequence(): number | undefined {
    return this.#size ? this.#at(this.#size - 1).sequence : undefined;
  }

  /** Appends the session's next frame (sequence lastSequence + 1), dropping the oldest when full. */
  push(frame: Frame): void {
    if (this.#size && frame.sequence !== this.lastSequence! + 1) this.clear(); // never keep a gap
    while (this.#size && (this.#size === this.capacity || this.#chars + frame.text.length > this.maxChars)) this.#dropOldest();
    this.#roomForOneMore();
    this.#slots[(this.#head + this.#size) % this.#slots.length] = frame;
    this.#size++;
    this.#chars += frame.text.length;
  }

  /**
   * Adds older frames in front, given in order and ending just before firstSequence (or, when
   * the ring is empty, ending at `upTo`, the session's last published sequence). Keeps only as
   * many of the newest of them as there is room for; anything not contiguous is ignored.
   */
  prepend(frames: readonly Frame[], upTo: number): void {
    const end = this.#size ? this.firstSequence! - 1 : upTo;
    if (frames.length === 0 || frames.at(-1)!.sequence !== end) return;
    for (let i = frames.length - 1; i >= 0 && this.#size < this.capacity; i--) {
      const f = frames[i]!;
      if (i < frames.length - 1 && f.sequence !== frames[i + 1]!.sequence - 1) return;
      if (this.#chars + f.text.length > this.maxChars) return;
      this.#roomForOneMore();
      this.#head = (this.#head - 1 + this.#slots.length) % this.#slots.length;
      this.#slots[this.#head] = f;
      this.#size++;
      this.#chars += f.text.length;
    }
  }

  /** Frames with sequence > after, when the ring holds all of them (after >= firstSequence - 1); else undefined. */
  after(after: number): Frame[] | undefined {
    const first = this.firstSequence;
    if (first === undefined || after < first - 1) return undefined;
    const out: Frame[] = [];
    for (let i = Math.max(0, after - first + 1); i < this.#size; i++) out.push(this.#at(i));
    return out;
  }

  /** The sequence of the kept frame with this event id, if any (newest first: resumes are usually recent). */
  sequenceOf(id: string): number | undefined {
    for (let i = this.#size - 1; i >= 0; i--) {
      const f = this.#at(i);
      if (f.id === id) return f.sequence;
    }
    return undefined;
  }

  clear(): void {
    this.#slots = [];
    this.#head = 0;
    this.#size = 0;
    this.#chars = 0;
  }

  #dropOldest(): void {
    this.#chars -= this.#at(0).text.length;
    this.#slots[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.#slots.length;
    this.#size--;
  }

  /** Grows the slots when full (callers never exceed `capacity`): the frames move to the front, in order. */
  #roomForOneMore(): void {
    const len = this.#slots.length;
    if (this.#size < len) return;
    const grown = new Array<Frame | undefined>(Math.min(this.capacity, Math.max(1, len * 2)));
    for (let i = 0; i < this.#size; i++) grown[i] = this.#at(i);
    this.#slots = grown;
    this.#head = 0;
  }

  #at(i: number): Frame {
    return this.#slots[(this.#head + i) % this.#slots.length]!;
  }
}
