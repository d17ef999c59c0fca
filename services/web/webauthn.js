// Security keys need the browser's WebAuthn API, so the pages that use them run this one script:
// a form marked data-webauthn="register" or "authenticate" fetches its options (data-options),
// asks the browser for the credential, puts it as JSON into the form's hidden `credential` field
// and submits the form as usual (with its CSRF token). Without JavaScript the form says so.
/* global document, fetch, navigator, PublicKeyCredential */
'use strict';
for (const form of document.querySelectorAll('form[data-webauthn]')) {
  const failed = form.querySelector('.webauthn-error');
  form.addEventListener('submit', async (event) => {
    if (form.elements.credential.value) return;
    event.preventDefault();
    if (failed) failed.hidden = true;
    try {
      const res = await fetch(form.dataset.options, {
        credentials: 'same-origin',
        headers: { accept: 'application/json' },
      });
      if (!res.ok) throw new Error(`options: ${res.status}`);
      const options = await res.json();
      const credential =
        form.dataset.webauthn === 'register'
          ? await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) })
          : await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) });
      form.elements.credential.value = JSON.stringify(credential.toJSON());
      form.submit();
    } catch {
      if (failed) failed.hidden = false;
    }
  });
}
