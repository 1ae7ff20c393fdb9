// The service's vocabularies (GET /api/v1/vocabulary): which machine words exist (case states, tiers, document kinds,
// event types, ...) and in which order, each declared once in the service. The words people read for them stay in
// labels.js (the dashboard's) and status-text.js (the status page's), keyed by these words.
// Loaded before any module that imports this one runs: should the request fail, the page's scripts do not start, as
// when a script itself fails to load.
import { request } from './api.js';

const { data } = await request('GET', '/api/v1/vocabulary');

/** The lists by name (`case_states`, `finished_states`, `tiers`, `document_kinds`, `upload_kinds`, ...). */
export const VOCABULARY = Object.freeze(data);
