export { addFormatOnce, addNamedSchemas, ajv, resolveRef } from './ajv.js';
export { coerceText } from './coerce.js';
export { applyDefaults } from './defaults.js';
