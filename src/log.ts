import { type DestinationStream, pino, type Logger } from 'pino';
import type { Config } from './config.js';

/**
 * JSON lines on stdout (or `destination`, where a test reads them); credentials never reach a log
 * line (see the request hook in http/app).
 */
export const createLogger = (config: Pick<Config, 'LOG_LEVEL'>, destination?: DestinationStream): Logger =>
  pino({ level: config.LOG_LEVEL, redact: ['req.headers.authorization', 'headers.authorization'] }, destination);
