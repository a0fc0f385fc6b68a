/// The few lines of script the hosted pages carry for passkeys: they read the options the page holds
/// (`#passkey-options`, a JSON data block), call `navigator.credentials.get` when the passkey form is
/// sent (and, on the sign-in page, once in the background for the browser's autofill: conditional
/// mediation), and post the answer as `AuthenticationResponseJSON` in the form's `credential` field.
/// The form is hidden until the script shows it, so a browser without script or WebAuthn never sees a
/// button that cannot work. Written by hand (no bundler, no library): the page allows exactly this
/// text by its hash.
enum PasskeyScript {
    static let text =
        #"(function(){var d=document.getElementById("passkey-options"),f=document.getElementById("passkey");"#
        + #"if(!d||!f||!window.PublicKeyCredential||!navigator.credentials)return;var o=JSON.parse(d.textContent),w=null;"#
        + #"function b(s){var r=atob(s.replace(/-/g,"+").replace(/_/g,"/")),a=new Uint8Array(r.length);"#
        + #"for(var i=0;i<r.length;i++)a[i]=r.charCodeAt(i);return a}"#
        + #"function e(x){var a=new Uint8Array(x),s="";for(var i=0;i<a.length;i++)s+=String.fromCharCode(a[i]);"#
        + #"return btoa(s).replace(/\+/g,"-").replace(/\//g,"_").replace(/=+$/,"")}"#
        + #"function k(){return{challenge:b(o.challenge),rpId:o.rpId,timeout:o.timeout,userVerification:o.userVerification,"#
        + #"allowCredentials:(o.allowCredentials||[]).map(function(c){return{type:"public-key",id:b(c.id),transports:c.transports}})}}"#
        + #"function g(c){var r=c.response;f.elements.credential.value=JSON.stringify({id:c.id,rawId:e(c.rawId),type:c.type,"#
        + #"response:{clientDataJSON:e(r.clientDataJSON),authenticatorData:e(r.authenticatorData),signature:e(r.signature),"#
        + #"userHandle:r.userHandle?e(r.userHandle):null}});f.submit()}"#
        + #"f.hidden=false;f.addEventListener("submit",function(v){if(f.elements.credential.value)return;v.preventDefault();"#
        + #"if(w)w.abort();w=null;setTimeout(function(){navigator.credentials.get({publicKey:k()}).then(g,function(){})},0)});"#
        + #"if(d.dataset.conditional==="1"&&PublicKeyCredential.isConditionalMediationAvailable)"#
        + #"PublicKeyCredential.isConditionalMediationAvailable().then(function(y){if(!y)return;w=new AbortController();"#
        + #"navigator.credentials.get({mediation:"conditional",signal:w.signal,publicKey:k()}).then(g,function(){})})})()"#
}
