/** A keypad entry is complete at `#` or after this pause. */
const DTMF_PAUSE_MS = 1200;

/** Collects keypad digits into one entry ("1234#", or digits followed by a pause). */
export class DtmfCollector {
  private digits = '';
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly onEntry: (digits: string) => void) {}

  push(digit: string): void {
    this.digits += digit;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (digit === '#') this.flush();
    else this.timer = setTimeout(() => this.flush(), DTMF_PAUSE_MS);
  }

  /** Drops a pending entry (the session ended). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.digits = '';
  }

  private flush(): void {
    const digits = this.digits;
    this.digits = '';
    this.timer = null;
    if (digits) this.onEntry(digits);
  }
}
