// The backup's size limit (spec 8), in a module of its own: the error catalog (cloud/errors.ts) reads
// it, and the catalog is also compiled for the operator console in the browser, where FFCE's Buffer
// code does not exist. The firmware's MAX_CLOUD_BLOB_BYTES is the same figure (test/firmware/backup-limits.test.ts).

/** 512 KB (spec 8): the largest blob the cloud accepts. */
export const MAX_BACKUP_BYTES = 524_288;
