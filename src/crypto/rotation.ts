import { DecryptionError } from './crypto-errors.js';
import { envelopeKeyId, rewrap, type SecretAad } from './envelope.js';
import type { Keyring } from './keyring.js';

/** One encrypted value as a resource stores it, with the AAD it was sealed for. */
export interface EncryptedRow extends SecretAad {
  blob: string;
}

/**
 * A table (or other store) holding encrypted values. Resources that add an encrypted
 * column plug in one source; `rotateSecrets` does the rest.
 */
export interface RotationSource {
  name: string;
  /** Every encrypted row (stream or page through them; rows may be skipped if deleted). */
  readAll(): AsyncIterable<EncryptedRow>;
  /**
   * Stores `newBlob` for the row if it still holds `row.blob` (compare-and-set); returns
   * false when the row changed or vanished meanwhile.
   */
  write(row: EncryptedRow, newBlob: string): Promise<boolean>;
}

export interface RotationReport {
  source: string;
  scanned: number;
  rewrapped: number;
  /** Rows already under the current key. */
  current: number;
  /** Rows changed concurrently (they were written with the current key by then). */
  conflicts: number;
  /** Rows that could not be opened (unknown key, tampered, malformed); ids only. */
  failed: { row_id: string; reason: string }[];
}

export interface RotateOptions {
  /** Count what would change without writing (default false). */
  dryRun: boolean;
  onProgress: (report: RotationReport) => void;
}

/** Re-wraps every value of every source with the keyring's current key. */
export async function rotateSecrets(
  keyring: Keyring,
  sources: readonly RotationSource[],
  opts: Partial<RotateOptions> = {},
): Promise<RotationReport[]> {
  const { dryRun = false, onProgress } = opts;
  const reports: RotationReport[] = [];
  for (const source of sources) {
    const report: RotationReport = { source: source.name, scanned: 0, rewrapped: 0, current: 0, conflicts: 0, failed: [] };
    for await (const row of source.readAll()) {
      report.scanned++;
      try {
        if (envelopeKeyId(row.blob) === keyring.current.kid) {
          report.current++;
          continue;
        }
        const next = rewrap(keyring, row.blob, row);
        if (dryRun || (await source.write(row, next))) report.rewrapped++;
        else report.conflicts++;
      } catch (err) {
        if (!(err instanceof DecryptionError)) throw err;
        report.failed.push({ row_id: row.row_id, reason: err.reason });
      }
    }
    reports.push(report);
    onProgress?.(report);
  }
  return reports;
}
