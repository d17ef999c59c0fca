// The Content-Security-Policy of the pages. Pages load nothing but their own style sheet and
// images (media may sit on another https host); no script runs, except on the security-key pages.
// No form-action: browsers apply it to the redirect after a form, and apps use custom schemes for
// their redirect URIs.
export const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data: https:; base-uri 'none'; frame-ancestors 'none'";

/** Pages with security keys: WebAuthn is a browser API, so they run our one script (and nothing else). */
export const WEBAUTHN_CSP = `${CSP}; script-src 'self'; connect-src 'self'`;
