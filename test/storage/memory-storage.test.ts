import { MemoryStorage } from '../../src/storage/memory-storage.js';
import { describeStorageConformance } from './conformance.js';

describeStorageConformance('memory', async (options) => new MemoryStorage(options));
