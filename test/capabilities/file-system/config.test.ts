import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_MAX_FILE_SIZE_BYTES, maxFileSizeBytes } from '../../../src/capabilities/file-system/config.js';

describe('file system config', () => {
  it('defaults to 10 MiB and reads max_file_size_mb or max_file_size, the smaller winning', () => {
    assert.equal(maxFileSizeBytes({}), DEFAULT_MAX_FILE_SIZE_BYTES);
    assert.equal(maxFileSizeBytes({ max_file_size_mb: 2 }), 2 * 1024 * 1024);
    assert.equal(maxFileSizeBytes({ max_file_size: 500 }), 500);
    assert.equal(maxFileSizeBytes({ max_file_size_mb: 1, max_file_size: 500 }), 500);
    assert.equal(maxFileSizeBytes({ max_file_size_mb: 0.001, max_file_size: 5000 }), 1048);
  });
});
