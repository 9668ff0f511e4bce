// Route schemas (TypeBox), by resource in schemas/: they validate requests, serialize responses and
// generate the OpenAPI document. This module gathers them for the modules that import them from here.
export * from './schemas/assign.js';
export * from './schemas/common.js';
export * from './schemas/experiments.js';
export { nameSchemas } from './schemas/openapi.js';
export * from './schemas/results.js';
