/// The hosted passkey enrolment page's script: it reads the creation options the page holds
/// (`#passkey-options`), calls `navigator.credentials.create` when the form is sent, and posts the
/// answer as `RegistrationResponseJSON` in the form's `credential` field. Hand-written and allowed by
/// its hash, like ``PasskeyScript``.
enum PasskeyCreateScript {
    static let text =
        #"(function(){var d=document.getElementById("passkey-options"),f=document.getElementById("passkey-new");"#
        + #"if(!d||!f||!window.PublicKeyCredential||!navigator.credentials)return;var o=JSON.parse(d.textContent);"#
        + #"function b(s){var r=atob(s.replace(/-/g,"+").replace(/_/g,"/")),a=new Uint8Array(r.length);"#
        + #"for(var i=0;i<r.length;i++)a[i]=r.charCodeAt(i);return a}"#
        + #"function e(x){var a=new Uint8Array(x),s="";for(var i=0;i<a.length;i++)s+=String.fromCharCode(a[i]);"#
        + #"return btoa(s).replace(/\+/g,"-").replace(/\//g,"_").replace(/=+$/,"")}"#
        + #"f.hidden=false;f.addEventListener("submit",function(v){if(f.elements.credential.value)return;v.preventDefault();"#
        + #"navigator.credentials.create({publicKey:{rp:o.rp,user:{id:b(o.user.id),name:o.user.name,displayName:o.user.displayName},"#
        + #"challenge:b(o.challenge),pubKeyCredParams:o.pubKeyCredParams,timeout:o.timeout,"#
        + #"excludeCredentials:(o.excludeCredentials||[]).map(function(c){return{type:"public-key",id:b(c.id),transports:c.transports}}),"#
        + #"authenticatorSelection:o.authenticatorSelection,attestation:o.attestation}}).then(function(c){var r=c.response;"#
        + #"f.elements.credential.value=JSON.stringify({id:c.id,rawId:e(c.rawId),type:c.type,response:{clientDataJSON:e(r.clientDataJSON),"#
        + #"attestationObject:e(r.attestationObject),transports:r.getTransports?r.getTransports():[]}});f.submit()},function(){})})})()"#
}
