import fp from 'fastify-plugin';
import swaggerUi from '@fastify/swagger-ui';
import { API_PREFIX } from '../../schemas.ts';

/** The human documentation page: Swagger UI over this API's own OpenAPI document. */
export const DOCS_PATH = `${API_PREFIX}/docs`;
export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;

/**
 * Every asset (scripts, styles, favicons, the logo as a data: URL) is served by the app itself from
 * the swagger-ui-dist files bundled in @fastify/swagger-ui; nothing comes from a CDN. The policy
 * below makes the browser hold the page to that. Styles allow 'unsafe-inline' because Swagger UI
 * renders some style attributes.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'self'",
].join('; ');

export interface DocsOptions {
  /** The configured public base URL, if any: its path (a proxy's mount point) prefixes the page's own URLs. */
  publicBaseUrl: string | undefined;
}

export default fp<DocsOptions>(
  async (app, options) => {
    const mountPath = options.publicBaseUrl === undefined ? '' : new URL(options.publicBaseUrl).pathname.replace(/\/+$/, '');
    // In a scope of its own, so that only the page's routes are marked: its assets are answered
    // afresh, never kept or given validators of the dataset.
    await app.register(async (page) => {
      page.addHook('onRoute', (route) => {
        route.config = { ...route.config, cache: false };
      });
      await page.register(swaggerUi, {
        // Both /docs and /docs/ answer (the app ignores trailing slashes; the page's asset URLs work from either).
        routePrefix: DOCS_PATH,
        indexPrefix: mountPath,
        theme: { title: 'hsds-org-api: API documentation' },
        staticCSP: CONTENT_SECURITY_POLICY,
        uiConfig: {
          // The page reads the served document (its `servers` entry is this server's URL), not the
          // plugin's own /docs/json copy: given `urls`, Swagger UI loads only the listed document.
          // A path from the root, so it resolves the same from /docs and /docs/.
          urls: [{ url: `${mountPath}${OPENAPI_PATH}`, name: 'hsds-org-api (HSDS 3.0 profile)' }],
          displayOperationId: true,
          displayRequestDuration: true,
        },
        // The plugin's own copies (/docs/json, /docs/yaml) say where this server is, like openapi.json.
        transformSpecificationClone: false,
        transformSpecification: (document, request) => ({ ...document, servers: [{ url: request.apiUrl() }] }),
      });
    });
  },
  { name: 'docs', dependencies: ['openapi', 'links'] },
);
