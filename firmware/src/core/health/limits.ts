// The bounds of the health reports on the wire (docs/device-health.md): what the board cuts its
// reports to, and what the cloud refuses past. One source for both (the cloud imports this module).

/** A report's body at most, in bytes (a boot or update report). */
export const MAX_REPORT_BYTES = 2048;
/** A heartbeat's body at most, in bytes. */
export const MAX_HEARTBEAT_BYTES = 256;
/** A crash's message, at most, in UTF-8 bytes as sent (the rest of a boot report fits in what is left of 2 KB). */
export const MAX_CRASH_MESSAGE_BYTES = 1024;
/** Where XS knew a crash happened, at most, in UTF-8 bytes as sent. */
export const MAX_WHERE_BYTES = 120;
/** An update failure's sentence, at most, in UTF-8 bytes as sent (the event log keeps 240 characters). */
export const MAX_DETAIL_BYTES = 240;
