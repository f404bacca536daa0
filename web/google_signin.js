// Google sign-in for the composer page (docs/web.md, Sign-in): Google Identity Services'
// button, and the ID token it yields. signin.js calls googleCredential only when the page
// carries <meta name="google-client-id">; the server checks the token (core/auth.py).
// The token is handed back to the caller alone: never stored here, never put in a URL.

const GIS_CLIENT = "https://accounts.google.com/gsi/client";

let loaded = null;

// The Google library, loaded once per page; a failed load may be tried again.
function googleIdentity() {
  loaded ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = GIS_CLIENT;
    script.async = true;
    script.onload = () => resolve(window.google.accounts.id);
    script.onerror = () => {
      loaded = null;
      script.remove();
      reject(new Error("Google sign-in could not be loaded"));
    };
    document.head.append(script);
  });
  return loaded;
}

// Shows the "Sign in with Google" button in `container` and resolves with the ID token
// (a JWT for `clientId`) once the person has signed in.
export async function googleCredential(clientId, container) {
  const identity = await googleIdentity();
  return new Promise((resolve) => {
    identity.initialize({
      client_id: clientId,
      callback: (response) => resolve(response.credential),
    });
    identity.renderButton(container, { type: "standard", text: "signin_with" });
  });
}
