/** A JSON value: what JSON columns and sub-documents, tool arguments and task checkpoints hold (a foundation room of one file). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
