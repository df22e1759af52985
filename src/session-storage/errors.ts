import { AppError } from '../errors.js';

/** A write, move or delete touching a read-only file (one from a capability mount): 403. */
export class ReadOnlyFileError extends AppError {
  constructor(path: string) {
    super(403, 'read_only', `File is read-only: ${path}`);
    this.name = 'ReadOnlyFileError';
  }
}
