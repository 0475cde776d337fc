import type { FastifyReply } from 'fastify';
import { isUuid } from '../hsds/ids.ts';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Sends a body that is already JSON text (rendered at publish time), without re-serialising it. */
export const sendJson = (reply: FastifyReply, body: string): FastifyReply => reply.type(JSON_CONTENT_TYPE).send(body);

/** The canonical (lower-case) form of a UUID path parameter, or undefined when it is not a UUID. */
export const canonicalUuid = (value: string): string | undefined => (isUuid(value) ? value.toLowerCase() : undefined);
