/**
 * The words the mail-safety filter recognises, in English, German, French, Spanish, Portuguese,
 * Chinese (simplified and traditional) and Japanese. Written here as they appear in mail; the
 * scanner folds them like the text (lowercase, no diacritics, full-width → ASCII).
 *
 * Roles (one word can have several):
 * - `code: "strong"` — names an access code without doubt ("verification code", "验证码"): a
 *   code-shaped token it introduces is always removed.
 * - `code: "secret"` — a secret noun (password, PIN, passcode, TAN): removed unless the mail is a
 *   meeting invite (`meetingSensitive`) — a meeting passcode is not an account secret.
 * - `code: "noun"` — a bare "code"/"código"/"コード": removed only with access context around it.
 * - `code: "ambiguous"` — "confirmation code", "access code": access context unless a booking,
 *   meeting or door context says otherwise.
 * - `qualifier` — access context (sign in, verify, reset, security, two-factor …) with a purpose.
 * - `warning` — what only access mail says ("do not share this code", "expires in").
 * - `link` — how link anchors and the text around links are read (see links.ts).
 * - `harm` — harmless context; `anchor: true` when the word labels the number after it
 *   ("order number", "tracking number", "meeting ID", "zip code"), which then passes untouched.
 */

export type Purpose = "sign-in" | "verification" | "reset" | "recovery" | "password";
export type Harm = "meeting" | "promo" | "booking" | "commerce" | "phone" | "postal" | "other";
export type LinkRole = "strong" | "weak" | "object" | "generic" | "harmless";

/** What one word means to the filter. */
export interface WordInfo {
  code?: "strong" | "secret" | "noun" | "ambiguous";
  meetingSensitive?: boolean;
  /** Access context; `"weak"`: counts only together with other signs of an access mail. */
  qualifier?: boolean | "weak";
  warning?: boolean;
  link?: LinkRole;
  purpose?: Purpose;
  harm?: Harm;
  /**
   * A harmless label for the number after it, which then passes (and wins over access words
   * farther away). `"tight"`: only when the number follows at once ("Order 4829173", "order #4829173",
   * not "confirm your order: 482917").
   */
  anchor?: boolean | "tight";
  /** In a subject, marks the mail as an access mail (stricter rules for the whole mail). */
  subject?: boolean;
}

const table = new Map<string, WordInfo>();

function add(words: string, info: WordInfo): void {
  for (const raw of words.split("|")) {
    const word = raw.trim();
    if (word) table.set(word, { ...table.get(word), ...info });
  }
}

// --- Codes: unambiguous access-code names -------------------------------------------------------
add(
  "sign-in code|sign in code|signin code|login code|log-in code|log in code|one-time code|one time code|onetime code|" +
    "one-time passcode|one-time password|one time password|one-time pin|single-use code|single use code|authentication code|" +
    "2fa code|two-factor code|two-factor authentication code|2-step verification code|two-step verification code|" +
    "mfa code|otp|otp code|totp|login pin|temporary code|magic code|security code|sms code|text code|" +
    "anmeldecode|login-code|logincode|einmalcode|einmal-code|einmalpasswort|einmal-passwort|einmalkennwort|sicherheitscode|" +
    "authentifizierungscode|authentisierungscode|mtan|sms-tan|smstan|" +
    "code de connexion|code d'authentification|code d’authentification|code à usage unique|mot de passe à usage unique|" +
    "code de sécurité|code temporaire|code otp|code de double authentification|code d'identification|" +
    "código de inicio de sesión|código de un solo uso|contraseña de un solo uso|clave de un solo uso|código de autenticación|" +
    "código de seguridad|código temporal|código otp|clave dinámica|" +
    "código de login|código de uso único|senha de uso único|código de autenticação|código de segurança|código temporário|" +
    "动态码|動態碼|动态密码|動態密碼|一次性密码|一次性密碼|一次性验证码|登录码|登錄碼|登入碼|安全码|安全碼|认证码|認證碼|授权码|授權碼|短信码|" +
    "認証コード|ワンタイムパスワード|ワンタイムコード|ワンタイムパスコード|セキュリティコード|ログインコード|認証番号|承認コード|ワンタイムキー",
  { code: "strong", purpose: "sign-in", subject: true },
);
add(
  "verification code|verify code|verification pin|activation code|validation code|device code|device verification code|" +
    "email verification code|phone verification code|" +
    "bestätigungscode|verifizierungscode|verifikationscode|aktivierungscode|freischaltcode|prüfcode|bestätigungs-pin|" +
    "code de vérification|code de validation|code d'activation|code d’activation|" +
    "código de verificación|código de validación|código de activación|" +
    "código de verificação|código de validação|código de ativação|" +
    "验证码|驗證碼|校验码|校驗碼|确认码|確認碼|激活码|激活碼|" +
    "確認コード|検証コード|確認用コード|本人確認コード|有効化コード",
  { code: "strong", purpose: "verification", subject: true },
);
add(
  "reset code|password reset code|password-reset code|rücksetzcode|zurücksetzungscode|code de réinitialisation|" +
    "código de restablecimiento|código de redefinição|重置码|重置碼|再設定コード",
  { code: "strong", purpose: "reset", subject: true },
);
add(
  "recovery code|backup code|account recovery code|recovery key|wiederherstellungscode|sicherungscode|backup-code|" +
    "code de récupération|code de secours|código de recuperación|código de respaldo|código de recuperação|código de backup|" +
    "恢复码|恢復碼|备用码|備用碼|リカバリーコード|バックアップコード|復旧コード",
  { code: "strong", purpose: "recovery", subject: true },
);
add(
  "temporary password|temp password|initial password|temporäres passwort|vorläufiges passwort|initialpasswort|" +
    "mot de passe temporaire|mot de passe provisoire|contraseña temporal|clave temporal|senha temporária|senha provisória|" +
    "临时密码|臨時密碼|初始密码|仮パスワード|一時パスワード|初期パスワード",
  { code: "strong", purpose: "password", subject: true },
);

// --- Codes: secret nouns, bare nouns, ambiguous names ---------------------------------------------
add("password|passcode|pin|pin code|passwort|kennwort|mot de passe|code pin|contraseña|clave|senha|密码|密碼|口令|パスワード|パスコード|暗証番号", {
  code: "secret",
  meetingSensitive: true,
  purpose: "password",
});
add("tan", { code: "secret", purpose: "sign-in" });
// Keys and tokens that sign in on their own (developer mail): removed like passwords.
add(
  "api key|api-key|apikey|api token|access token|access key|secret key|secret access key|personal access token|auth token|" +
    "bearer token|client secret|app password|app-specific password|anwendungspasswort|app-passwort|mot de passe d'application|" +
    "contraseña de aplicación|senha de app|应用专用密码|アプリパスワード",
  { code: "secret", purpose: "password" },
);
add("code|código|token|コード", { code: "noun" });
// Card receipts print an "auth code"; banks also call a payment's one-time code that: a code unless a
// receipt or booking is around it and nothing warns.
add("auth code|authorization code|authorisation code|approval code|genehmigungscode|code d'autorisation|código de autorización|código de autorização", {
  code: "ambiguous",
  purpose: "sign-in",
});
add(
  "confirmation code|access code|zugangscode|zugriffscode|code de confirmation|code d'accès|code d’accès|código de confirmación|" +
    "código de acceso|código de confirmação|código de acesso|確認番号",
  { code: "ambiguous", qualifier: true, meetingSensitive: true, purpose: "verification" },
);

// --- Access context (qualifiers) ----------------------------------------------------------------
add(
  "sign in|sign-in|signin|log in|log-in|login|logging in|signing in|log on|two-factor|two factor|two-step|2-step|multi-factor|" +
    "mfa|2fa|authentication|authenticate|one-time|single-use|security|secure|anmelden|anmeldung|einloggen|zwei-faktor|2-faktor|" +
    "authentifizierung|sicherheit|se connecter|connexion|double authentification|authentification|sécurité|" +
    "iniciar sesión|inicio de sesión|iniciar sessão|autenticación|seguridad|dos pasos|doble factor|fazer login|autenticação|" +
    "segurança|duas etapas|登录|登錄|登入|身份验证|身份驗證|双重验证|两步验证|兩步驗證|ログイン|サインイン|二段階認証|2段階認証|" +
    "二要素認証|認証|セキュリティ",
  { qualifier: true, purpose: "sign-in" },
);
add(
  "verify|verification|verifying|new device|bestätigen|bestätigung|verifizieren|verifizierung|neues gerät|vérifier|vérification|" +
    "nouvel appareil|verificar|verificación|nuevo dispositivo|verificação|novo dispositivo|验证|驗證|新设备|新裝置|本人確認|" +
    "新しいデバイス|新しい端末",
  { qualifier: true, purpose: "verification" },
);
// Weaker: also said of events, cards and products ("registration code for parents' evening").
add(
  "activate|activation|identity|register|registration|sign up|sign-up|signup|identität|aktivieren|registrierung|registrieren|" +
    "identité|activer|inscription|identidad|activar|registro|identidade|ativar|cadastro|激活|注册|註冊|有効化|登録",
  { qualifier: "weak", purpose: "verification" },
);
add(
  "reset|password reset|forgot|forgotten|zurücksetzen|passwort vergessen|réinitialiser|réinitialisation|oublié|restablecer|" +
    "olvidaste|redefinir|redefinição|esqueceu|重置|重設|忘记密码|忘記密碼|リセット|再設定",
  { qualifier: true, purpose: "reset" },
);
add(
  "recover|recovery|account recovery|wiederherstellen|wiederherstellung|récupérer|récupération|recuperar|recuperación|" +
    "recuperação|恢复|恢復|找回|復旧|復元|リカバリー",
  { qualifier: true, purpose: "recovery" },
);

// --- What only access mail says ------------------------------------------------------------------
add(
  "do not share|don't share|don’t share|never share|not share this|anyone asks|expires in|expire in|valid for|if you did not request|" +
    "if you didn't request|if you didn’t request|didn't request|did not request|not requested|wasn't you|was this you|someone tried|" +
    "nicht weitergeben|nicht weiter|niemandem|gültig für|läuft in|läuft ab|nicht angefordert|nicht von ihnen|" +
    "ne partagez|ne communiquez|ne le partagez|expire dans|valable pendant|valable|n'avez pas demandé|n’avez pas demandé|" +
    "pas à l'origine|pas à l’origine|no compartas|no comparta|caduca en|expira en|válido durante|válido por|no solicitaste|" +
    "no has solicitado|no fuiste tú|não compartilhe|não partilhe|expira em|não solicitou|não foi você|请勿|切勿|勿告知|泄露|" +
    "分钟内有效|分鐘內有效|有效期|非本人操作|他人に|教えないで|共有しないで|有効期限|分間有効|心当たり|请输入|请在页面输入|" +
    "を入力してください|入力してください",
  { warning: true },
);
// How a one-time code is handed over ("enter this code", "your code is"): a code word and a warning at once.
add(
  "enter this code|enter the code|enter the following code|use this code to|use the following code|type this code|" +
    "your code is|here is your code|here's your code|here’s your code|geben sie diesen code|geben sie den code|diesen code eingeben|" +
    "ihr code lautet|ihr code ist|mit diesem code|saisissez ce code|saisissez le code|entrez ce code|entrez le code|utilisez ce code|" +
    "voici votre code|votre code est|introduce este código|introduce el código|ingresa este código|ingresa el código|usa este código|" +
    "utiliza este código|tu código es|aquí tienes tu código|digite o código|digite este código|insira o código|use o código|" +
    "use este código|seu código é",
  { warning: true, code: "noun" },
);

// --- Links -----------------------------------------------------------------------------------------
add(
  "reset your password|reset password|reset my password|password reset|forgot your password|forgot password|change your password|" +
    "set a new password|create a new password|choose a new password|passwort zurücksetzen|kennwort zurücksetzen|" +
    "passwort ändern|réinitialiser votre mot de passe|réinitialiser mon mot de passe|" +
    "mot de passe oublié|restablecer contraseña|restablecer tu contraseña|restablecer la contraseña|" +
    "cambiar contraseña|redefinir senha|redefinir sua senha|redefinir a senha|alterar senha|重置密码|重設密碼|" +
    "重设密码|找回密码|修改密码|パスワードをリセット|パスワードの再設定|パスワード再設定",
  { link: "strong", qualifier: true, purpose: "reset", subject: true },
);
add(
  "magic link|sign-in link|login link|log in link|sign in with this link|log me in|sign me in|sign in to|log in to|" +
    "anmeldelink|jetzt anmelden|lien de connexion|me connecter|connectez-vous|enlace de inicio de sesión|inicia sesión|" +
    "link de acesso|link de login|entrar na conta|点击登录|登录链接|ログインリンク|サインインリンク",
  { link: "strong", qualifier: true, purpose: "sign-in", subject: true },
);
add(
  "verify your email|verify email|verify your account|verify your address|verify your identity|confirm your email|confirm email|" +
    "confirm your email address|confirm your account|confirm your address|confirm my email|confirm my account|confirm sign-in|" +
    "confirm login|activate your account|activate account|yes, it was me|it was me|this was me|yes, it's me|yes, this was me|" +
    "approve sign-in|approve login|approve this sign-in|authorize this device|trust this device|new sign-in|new login|" +
    "e-mail-adresse bestätigen|e-mail bestätigen|konto bestätigen|konto aktivieren|das war ich|ich war das|" +
    "confirmer votre adresse|confirmer mon adresse|confirmer votre e-mail|vérifier votre adresse|activer votre compte|c'est moi|c’est moi|" +
    "confirmar tu correo|confirmar correo|verificar tu correo|verificar correo|activar tu cuenta|activar cuenta|fui yo|" +
    "confirmar seu e-mail|confirmar e-mail|verificar seu e-mail|verificar e-mail|ativar sua conta|ativar conta|fui eu|" +
    "验证邮箱|驗證郵箱|确认邮箱|激活账号|激活帳號|是我本人|メールアドレスを確認|メールアドレスの確認|アカウントを有効化|本人です",
  { link: "strong", qualifier: true, purpose: "verification", subject: true },
);
add(
  "recover your account|recover account|restore access|secure your account|wasn't me|this wasn't me|not me|it wasn't me|" +
    "konto wiederherstellen|das war ich nicht|récupérer votre compte|ce n'était pas moi|ce n’était pas moi|recuperar tu cuenta|" +
    "recuperar cuenta|no fui yo|recuperar sua conta|recuperar conta|não fui eu|恢复账号|恢复帐号|找回账号|不是我|不是本人|" +
    "アカウントを復旧|アカウントの復旧|私ではありません",
  { link: "strong", qualifier: true, purpose: "recovery", subject: true },
);
add("verify|verifizieren|vérifier|verificar|验证|驗證|認証する|activate|aktivieren|activer|activar|ativar|激活|有効化", { link: "strong" });
add(
  "sign in|sign-in|log in|login|log-in|signin|anmelden|einloggen|se connecter|connexion|iniciar sesión|acceder|entrar|" +
    "fazer login|acessar|iniciar sessão|登录|登錄|登入|ログイン|サインイン",
  { link: "strong" },
);
add("reset|zurücksetzen|réinitialiser|restablecer|redefinir|重置|重設|リセット|再設定|recover|wiederherstellen|récupérer|recuperar|恢复|復旧", {
  link: "strong",
});
add("confirm|bestätigen|confirmer|valider|confirmar|validar|确认|確認|確定|approve|genehmigen|approuver|aprobar|aprovar|批准|承認", {
  link: "weak",
});
add(
  "email|e-mail|email address|e-mail address|account|address|registration|subscription|identity|device|konto|e-mail-adresse|" +
    "adresse|registrierung|compte|adresse e-mail|adresse électronique|inscription|cuenta|correo|correo electrónico|registro|conta|" +
    "cadastro|邮箱|郵箱|账号|帳號|账户|帳戶|注册|メールアドレス|アカウント|登録",
  { link: "object" },
);
add(
  "click here|here|this link|the link|link|button|click|tap here|below|continue|hier|hier klicken|diesen link|weiter|ici|cliquez ici|" +
    "ce lien|continuer|aquí|aqui|haz clic|este enlace|continuar|clique aqui|este link|点击这里|点击|这里|此处|链接|連結|继续|" +
    "こちら|ここ|リンク|続行|次へ",
  { link: "generic" },
);
add(
  "unsubscribe|abbestellen|abmelden|newsletter abbestellen|se désabonner|désabonner|se désinscrire|désinscrire|darse de baja|" +
    "cancelar suscripción|cancelar a inscrição|descadastrar|退订|退訂|取消订阅|配信停止|購読解除|privacy|privacy policy|datenschutz|" +
    "confidentialité|privacidad|privacidade|隐私|プライバシー|terms|help|help center|support|contact|impressum|agb|aide|ayuda|" +
    "ajuda|帮助|ヘルプ|preferences|manage preferences|einstellungen|préférences|preferencias|preferências",
  { link: "harmless" },
);

// --- Harmless context: labels of numbers that are not secrets (anchors) and the words around them --
add(
  "meeting id|meeting-id|meeting number|meeting passcode|meeting password|meeting pin|conference id|conference code|webinar id|" +
    "webinar passcode|participant code|participant pin|attendee pin|host key|besprechungs-id|konferenz-id|meeting-kennwort|" +
    "id de réunion|numéro de réunion|code secret de la réunion|id de reunión|código de acceso a la reunión|id da reunião|" +
    "senha da reunião|会议号|會議號|会议id|会议密码|會議密碼|会議id|ミーティングid|ミーティングパスコード|ウェビナーid|会議番号",
  { harm: "meeting", anchor: true },
);
add(
  "meeting|zoom meeting|join zoom meeting|teams meeting|join the meeting|join meeting|" +
    "join by phone|dial-in|dial in|conference|webinar|besprechung|konferenz|réunion|conférence|reunión|videollamada|reunião|" +
    "会议|會議|会議|ミーティング|ウェビナー",
  { harm: "meeting" },
);
add(
  "promo code|promotional code|coupon code|discount code|voucher code|gift card code|gift code|claim code|redemption code|" +
    "referral code|invite code|invitation code|class code|course code|gutscheincode|rabattcode|aktionscode|einladungscode|" +
    "code promo|code de réduction|code cadeau|code d'invitation|code d’invitation|código promocional|código de descuento|" +
    "código de invitación|código de desconto|código de convite|cupom|优惠码|優惠碼|兑换码|兌換碼|邀请码|邀請碼|" +
    "クーポンコード|プロモーションコード|ギフトコード|招待コード",
  { harm: "promo", anchor: true },
);
add(
  "promo|coupon|discount|voucher|gift card|redeem|% off|off your|sale|gutschein|rabatt|réduction|bon de réduction|carte cadeau|" +
    "cupón|cupon|descuento|desconto|优惠|優惠|折扣|优惠券|礼品卡|クーポン|割引|ギフトカード",
  { harm: "promo" },
);
add(
  "booking reference|booking code|booking number|reservation number|reservation code|confirmation number|record locator|pnr|" +
    "ticket number|e-ticket number|door code|lockbox code|gate code|key code|locker code|locker|pickup code|" +
    "buchungsnummer|buchungscode|reservierungsnummer|bestätigungsnummer|türcode|schließfach|numéro de réservation|" +
    "code de réservation|code de la porte|código de reserva|número de reserva|localizador|número da reserva|código da reserva|" +
    "取件码|取件碼|订单确认号|预订号|預訂號|予約番号|予約確認番号|受付番号|暗証番号ボックス",
  { harm: "booking", anchor: true },
);
add(
  "booking|reservation|flight|itinerary|hotel|check-in|buchung|reservierung|flug|réservation|vol|billet|reserva|vuelo|" +
    "voo|bilhete|预订|預訂|预定|訂位|航班|入住|予約|便名|チェックイン|搭乗",
  { harm: "booking" },
);
add(
  "order|invoice|receipt|tracking|reference|ref|ref.|bestellung|rechnung|referenz|commande|facture|référence|pedido|factura|" +
    "referencia|fatura|encomenda|订单|訂單|发票|發票|注文|請求書|ticket|room|raum|salle|sala|seat|gate|platform|gleis|version|" +
    "build|page|seite|教室",
  { harm: "commerce", anchor: "tight" },
);
add(
  "order number|order no|order no.|order #|order id|invoice number|invoice no|invoice #|receipt number|" +
    "tracking number|tracking code|tracking id|shipment number|parcel number|customer number|customer id|account number|" +
    "member number|membership number|policy number|case number|ticket id|reference number|transaction id|sku|" +
    "product code|item code|article number|serial number|model number|student id|student number|" +
    "bestellnummer|auftragsnummer|rechnungsnummer|kundennummer|sendungsnummer|sendungsverfolgung|vertragsnummer|" +
    "mitgliedsnummer|aktenzeichen|artikelnummer|matrikelnummer|numéro de commande|numéro de facture|" +
    "numéro de suivi|numéro client|número de pedido|número de factura|número de seguimiento|" +
    "número de cliente|número do pedido|nota fiscal|código de rastreamento|código de rastreio|rastreio|" +
    "订单号|訂單號|发票号|运单号|運單號|快递单号|快遞單號|客户号|注文番号|ご注文番号|請求書番号|" +
    "追跡番号|お問い合わせ番号|伝票番号|お客様番号|会員番号|お届け",
  { harm: "commerce", anchor: true },
);
add(
  "phone|telephone|tel|tel.|mobile|call|call us|fax|hotline|whatsapp|telefon|handy|anrufen|téléphone|tél|tél.|appelez|teléfono|" +
    "llame|llámenos|telefone|celular|ligue|电话|電話|手机|手機|携帯|お電話",
  { harm: "phone", anchor: true },
);
add("zip|zip code|postal code|postcode|plz|postleitzahl|code postal|código postal|cep|邮编|郵遞區號|郵便番号|〒", {
  harm: "postal",
  anchor: true,
});
add(
  "qr code|qr-code|barcode|bar code|dress code|source code|error code|status code|area code|country code|color code|colour code|" +
    "code of conduct|html code|embed code|iban|bic|swift|vat|tax id|steuernummer|ust-idnr|bank code|sort code|routing number|" +
    "bankleitzahl|blz|room number|isbn|二维码|二維碼|条形码|條碼|qrコード|バーコード",
  { harm: "other", anchor: true },
);

/** Every word, folded by `fold` (the scanner's folding), with what it means. */
export function foldedLexicon(fold: (word: string) => string): Map<string, WordInfo> {
  const out = new Map<string, WordInfo>();
  for (const [word, info] of table) {
    const key = fold(word);
    out.set(key, { ...out.get(key), ...info });
  }
  return out;
}
