// Test setup: an in-memory IndexedDB for every Node test file.
import 'fake-indexeddb/auto';
