/**
 * Access mails in German, French, Spanish and Portuguese (and a raw message in ISO-8859-1).
 * Chinese and Japanese are in specs-access-cjk.ts. Invented senders on .example domains.
 */
import type { MailSpec } from "./compose.js";

const link = (href: string, label: string) => `<p><a href="${href}" style="background:#222;color:#fff;padding:10px 18px">${label}</a></p>`;

const de: MailSpec[] = [
  {
    id: "de-otp-plain",
    from: "Sparkonto Direkt <sicherheit@sparkonto.example>",
    subject: "Ihr Bestätigungscode",
    text: "Guten Tag Frau Lima,\n\nIhr Bestätigungscode lautet: 715309\n\nDer Code ist 10 Minuten gültig. Geben Sie ihn niemals weiter – unsere Mitarbeiter fragen nie danach.\n\nSparkonto Direkt AG · Kundenservice 030 1234 5678",
    expect: { access: true, secrets: ["715309"], keep: ["030 1234 5678"] },
  },
  {
    id: "de-otp-latin1-qp",
    raw: [
      "From: Wolkenspeicher <no-reply@wolkenspeicher.example>",
      "To: ana@home.example",
      "Subject: =?ISO-8859-1?Q?Ihr_Anmeldecode_f=FCr_Wolkenspeicher?=",
      "Date: Sun, 02 Mar 2025 09:00:00 +0100",
      "Message-ID: <corpus.de-otp-latin1-qp@mail.example>",
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=ISO-8859-1",
      "Content-Transfer-Encoding: quoted-printable",
      "",
      "Hallo,",
      "",
      "jemand m=F6chte sich bei Ihrem Konto anmelden. Ihr Anmeldecode:",
      "",
      "   2 4 6 8 1 3",
      "",
      "Falls Sie das nicht waren, =E4ndern Sie bitte sofort Ihr Passwort.",
      "",
    ].join("\r\n"),
    expect: { access: true, secrets: ["246813"] },
  },
  {
    id: "de-reset-link",
    from: "Bahnfreund <service@bahnfreund.example>",
    subject: "Passwort zurücksetzen",
    html: `<p>Hallo Ana,</p><p>Sie haben angefordert, Ihr Passwort zurückzusetzen. Klicken Sie auf den folgenden Button:</p>${link("https://www.bahnfreund.example/konto/passwort-neu?token=b7e5c3a1f9d7b5e3c1a9f7d5", "Neues Passwort festlegen")}<p>Der Link ist 2 Stunden gültig. Ihre Kundennummer: 5520-1187</p>`,
    expect: { access: true, secrets: ["b7e5c3a1f9d7b5e3c1a9f7d5"], keep: ["5520-1187"] },
  },
  {
    id: "de-verify-email",
    from: "Vereinsplaner <team@vereinsplaner.example>",
    subject: "Bitte bestätigen Sie Ihre E-Mail-Adresse",
    html: `<p>Willkommen beim Vereinsplaner!</p><p>Bitte bestätigen Sie Ihre E-Mail-Adresse, um Ihr Konto zu aktivieren:</p><p><a href="https://links.vereinsplaner.example/ls/click?upn=A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6">E-Mail-Adresse bestätigen</a></p><p><a href="https://vereinsplaner.example/datenschutz">Datenschutz</a> · <a href="https://vereinsplaner.example/impressum">Impressum</a></p>`,
    expect: { access: true, secrets: ["A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"], keep: ["https://vereinsplaner.example/datenschutz"] },
  },
  {
    id: "de-device-new",
    from: "Postfachwelt <sicherheit@postfachwelt.example>",
    subject: "Neue Anmeldung auf einem neuen Gerät",
    text: "Hallo,\n\nwir haben eine Anmeldung auf einem neuen Gerät festgestellt (iPhone, Hamburg).\n\nWaren Sie das? Bestätigen Sie das Gerät hier:\nhttps://postfachwelt.example/geraet/bestaetigen?id=dev_93kd82jf71hs62ga\n\nDas war ich nicht: https://postfachwelt.example/konto/sperren?id=dev_93kd82jf71hs62ga",
    expect: { access: true, secrets: ["dev_93kd82jf71hs62ga", "93kd82jf71hs62ga"] },
  },
  {
    id: "de-tan",
    from: "Nordbank Online <tan@nordbank.example>",
    subject: "Ihre TAN für die Überweisung",
    text: "Für Ihre Überweisung über 250,00 EUR an Stadtwerke Kiel lautet die TAN: 883014\n\nPrüfen Sie die Empfänger-IBAN DE89 3704 0044 0532 0130 00 genau, bevor Sie die TAN eingeben.",
    expect: { access: true, secrets: ["883014"], keep: ["250,00 EUR", "DE89 3704 0044 0532 0130 00"] },
  },
  {
    id: "de-magic-link",
    from: "Lesezirkel App <login@lesezirkel.example>",
    subject: "Ihr Anmeldelink",
    html: `<p>Klicken Sie hier, um sich anzumelden:</p><p><a href="https://lesezirkel.example/login/link/9f8e7d6c5b4a39281706f5e4d3c2b1a0">Jetzt anmelden</a></p><p>Der Link funktioniert nur einmal.</p>`,
    expect: { access: true, secrets: ["9f8e7d6c5b4a39281706f5e4d3c2b1a0"] },
  },
  {
    id: "de-einmalpasswort-alnum",
    from: "Stadtportal <buergerkonto@stadtportal.example>",
    subject: "Einmalpasswort Bürgerkonto",
    text: "Ihr Einmalpasswort für das Bürgerkonto: HT4K-92PL\nGültig bis 11:45 Uhr.",
    expect: { access: true, secrets: ["HT4K92PL"] },
  },
  {
    id: "de-recovery",
    from: "Fotobuch Studio <konto@fotobuch.example>",
    subject: "Konto wiederherstellen",
    html: `<p>Sie haben die Wiederherstellung Ihres Kontos angefordert.</p><p><a href="https://fotobuch.example/recover?k=Zk82Lm19Qp47Rs30Tv65">Konto wiederherstellen</a></p>`,
    expect: { access: true, secrets: ["Zk82Lm19Qp47Rs30Tv65"] },
  },
];

const fr: MailSpec[] = [
  {
    id: "fr-otp-plain",
    from: "Banque Azur <securite@banqueazur.example>",
    subject: "Votre code de vérification",
    text: "Bonjour,\n\nVotre code de vérification est : 640 218\n\nCe code expire dans 10 minutes. Ne le communiquez à personne.\n\nBanque Azur – Service clients : 01 23 45 67 89",
    expect: { access: true, secrets: ["640218"], keep: ["01 23 45 67 89"] },
  },
  {
    id: "fr-otp-html-entities",
    from: "MaMutuelle <no-reply@mamutuelle.example>",
    subject: "Code de connexion à votre espace",
    html: `<p>Voici votre code de connexion &agrave; usage unique&nbsp;:</p><p style="font-size:26px"><b>&#51;&#48;&#55;&#57;&#49;&#52;</b></p><p>Si vous n&rsquo;&ecirc;tes pas &agrave; l&rsquo;origine de cette demande, ignorez ce message.</p>`,
    expect: { access: true, secrets: ["307914"] },
  },
  {
    id: "fr-reset-link",
    from: "Librairie Voltaire <compte@librairie-voltaire.example>",
    subject: "Réinitialisation de votre mot de passe",
    html: `<p>Bonjour Ana,</p><p>Pour réinitialiser votre mot de passe, cliquez sur le lien ci-dessous :</p><p><a href="https://www.librairie-voltaire.example/compte/reinitialiser?jeton=5d4c3b2a19f8e7d6c5b4a392">Réinitialiser mon mot de passe</a></p><p>Commande n° 2025-0412 en cours de préparation.</p>`,
    expect: { access: true, secrets: ["5d4c3b2a19f8e7d6c5b4a392"], keep: ["2025-0412"] },
  },
  {
    id: "fr-confirm-email-tracked",
    from: "Covoit'Plus <bonjour@covoitplus.example>",
    subject: "Confirmez votre adresse e-mail",
    html: `<p>Encore une étape ! Confirmez votre adresse e-mail pour activer votre compte.</p><p><a href="https://t.covoitplus.example/r/?id=h4c8d2e6f,9b3a7c1d,5e2f8a4b&amp;p1=Xk3Lm9Qr2Tz7Wv5Yn8">Confirmer mon adresse</a></p>`,
    expect: { access: true, secrets: ["Xk3Lm9Qr2Tz7Wv5Yn8"] },
  },
  {
    id: "fr-new-device",
    from: "Messagerie Étoile <alerte@etoile-mail.example>",
    subject: "Nouvelle connexion sur un nouvel appareil",
    text: "Une connexion a eu lieu depuis un nouvel appareil (Windows, Lyon).\n\nSi c'est bien vous, confirmez en saisissant ce code : 52 81 96\n\nSinon, sécurisez votre compte : https://etoile-mail.example/securite/bloquer?s=Ab12Cd34Ef56Gh78Ij90",
    expect: { access: true, secrets: ["528196", "Ab12Cd34Ef56Gh78Ij90"] },
  },
  {
    id: "fr-temp-password",
    from: "Intranet Lycée Jean-Moulin <ent@lycee-jm.example>",
    subject: "Vos identifiants ENT",
    text: "Identifiant : ana.lima\nMot de passe provisoire : Bleu7-Cerf\n\nVous devrez le changer lors de votre première connexion.",
    expect: { access: true, secrets: ["Bleu7-Cerf"] },
  },
  {
    id: "fr-otp-subject",
    from: "Trainville <noreply@trainville.example>",
    subject: "Code de sécurité : 118 204",
    text: "Saisissez ce code pour finaliser votre connexion. Il est valable 5 minutes.",
    expect: { access: true, secrets: ["118204"] },
  },
  {
    id: "fr-magic-base64",
    from: "Carnet de Notes <acces@carnetdenotes.example>",
    subject: "Votre lien de connexion",
    text: "Bonjour,\n\nVoici votre lien de connexion (valable 20 minutes) :\nhttps://carnetdenotes.example/connexion/lien?t=Mz4kP9wQ2xR7vB5nL8cJ\n\nÀ bientôt !",
    encoding: "base64",
    expect: { access: true, secrets: ["Mz4kP9wQ2xR7vB5nL8cJ"] },
  },
];

const es: MailSpec[] = [
  {
    id: "es-otp-plain",
    from: "Banco Solar <seguridad@bancosolar.example>",
    subject: "Tu código de verificación",
    text: "Hola Ana:\n\nTu código de verificación es 902734. Caduca en 10 minutos.\n\nNo compartas este código con nadie.",
    expect: { access: true, secrets: ["902734"] },
  },
  {
    id: "es-otp-html-split",
    from: "Mercado Rojo <cuenta@mercadorojo.example>",
    subject: "Código de inicio de sesión",
    html: `<p>Usa este código para iniciar sesión:</p><p style="font-size:30px"><span>41</span><span>7</span><span>06</span><span>3</span></p><p>Si no fuiste tú, cambia tu contraseña.</p>`,
    expect: { access: true, secrets: ["417063"] },
  },
  {
    id: "es-reset-link",
    from: "Cine Plaza <clientes@cineplaza.example>",
    subject: "Restablecer tu contraseña",
    html: `<p>Recibimos una solicitud para restablecer la contraseña de tu cuenta.</p><p><a href="https://www.cineplaza.example/cuenta/restablecer/6a5b4c3d2e1f0a9b8c7d6e5f">Restablecer contraseña</a></p><p>Si no lo solicitaste, ignora este mensaje.</p>`,
    expect: { access: true, secrets: ["6a5b4c3d2e1f0a9b8c7d6e5f"] },
  },
  {
    id: "es-confirm-account",
    from: "Huerto Urbano <hola@huertourbano.example>",
    subject: "Confirma tu correo electrónico",
    text: "¡Gracias por registrarte!\n\nConfirma tu correo electrónico haciendo clic aquí:\nhttps://huertourbano.example/registro/confirmar?codigo=QW12ER34TY56\n\nEquipo Huerto Urbano",
    expect: { access: true, secrets: ["QW12ER34TY56"] },
  },
  {
    id: "es-otp-dashed-qp",
    from: "Viajes Brisa <noreply@viajesbrisa.example>",
    subject: "Código de seguridad",
    text: "Tu código de seguridad de un solo uso es: 550-871\n\nVálido durante 15 minutos. Viajes Brisa nunca te pedirá este código por teléfono.",
    encoding: "quoted-printable",
    expect: { access: true, secrets: ["550871"] },
  },
  {
    id: "es-recovery",
    from: "Nube Fotos <soporte@nubefotos.example>",
    subject: "Recupera tu cuenta",
    html: `<p>Alguien solicitó recuperar tu cuenta de Nube Fotos.</p><p>Para recuperar el acceso, pulsa <a href="https://www.google.com/url?q=https://nubefotos.example/recuperar?token%3DLp0Ok9Ij8Uh7Yg6Tf5Rd4&amp;sa=D">aquí</a>.</p>`,
    expect: { access: true, secrets: ["Lp0Ok9Ij8Uh7Yg6Tf5Rd4"] },
  },
  {
    id: "es-temp-password",
    from: "Club Deportivo Norte <socios@cdnorte.example>",
    subject: "Acceso al área de socios",
    text: "Usuario: ana.lima\nContraseña temporal: Sol-2931x\n\nCámbiala la primera vez que inicies sesión.",
    expect: { access: true, secrets: ["Sol-2931x"] },
  },
  {
    id: "es-otp-letters",
    from: "Chatea <auth@chatea.example>",
    subject: "Tu código de acceso",
    text: "Introduce este código para iniciar sesión en Chatea: XQWPTK\n\nCaduca en 5 minutos.",
    expect: { access: true, secrets: ["XQWPTK"] },
  },
];

const pt: MailSpec[] = [
  {
    id: "pt-otp-plain",
    from: "Banco Atlântico <seguranca@bancoatlantico.example>",
    subject: "Seu código de verificação",
    text: "Olá Ana,\n\nSeu código de verificação é 384 105.\n\nEle expira em 10 minutos. Não compartilhe este código com ninguém.",
    expect: { access: true, secrets: ["384105"] },
  },
  {
    id: "pt-otp-html",
    from: "Lojinha Verde <conta@lojinhaverde.example>",
    subject: "Código de acesso à sua conta",
    html: `<p>Use o código abaixo para fazer login:</p><h1 style="letter-spacing:6px">9&nbsp;0&nbsp;6&nbsp;4&nbsp;7&nbsp;2</h1><p>Se não foi você, ignore este e-mail.</p><p>Pedido nº 77120 continua em separação.</p>`,
    expect: { access: true, secrets: ["906472"], keep: ["77120"] },
  },
  {
    id: "pt-reset-link",
    from: "Streamly Brasil <naoresponda@streamly.example>",
    subject: "Redefinição de senha",
    html: `<p>Recebemos um pedido para redefinir sua senha.</p><p><a href="https://streamly.example/senha/redefinir?token=c9b8a7f6e5d4c3b2a1f0e9d8">Redefinir senha</a></p><p>Este link expira em 24 horas.</p>`,
    expect: { access: true, secrets: ["c9b8a7f6e5d4c3b2a1f0e9d8"] },
  },
  {
    id: "pt-confirm-email",
    from: "Agenda Escolar <contato@agendaescolar.example>",
    subject: "Confirme seu e-mail",
    html: `<p>Bem-vindo! Confirme seu e-mail para ativar sua conta:</p><p><a href="https://click.agendaescolar.example/track/click?u=9d8c7b6a5f4e3d2c1b0a&amp;id=Rt5Yu6Io7Pa8Sd9Fg0">Confirmar e-mail</a></p>`,
    expect: { access: true, secrets: ["9d8c7b6a5f4e3d2c1b0a", "Rt5Yu6Io7Pa8Sd9Fg0"] },
  },
  {
    id: "pt-new-device-code",
    from: "ZapMensagens <seguranca@zapmensagens.example>",
    subject: "Novo dispositivo",
    text: "Detectamos um login em um novo dispositivo. Para confirmar que foi você, digite o código 27-49-08 no aplicativo.\n\nSe não foi você, redefina sua senha imediatamente.",
    expect: { access: true, secrets: ["274908"] },
  },
  {
    id: "pt-magic-link",
    from: "Caderno Digital <entrar@cadernodigital.example>",
    subject: "Seu link de acesso",
    text: "Clique no link para entrar na sua conta:\nhttps://cadernodigital.example/entrar?magic=Hq7Wr2Ey9Ut4Ip1Oa6Sd\n\nO link vale por 15 minutos.",
    expect: { access: true, secrets: ["Hq7Wr2Ey9Ut4Ip1Oa6Sd"] },
  },
  {
    id: "pt-temp-password",
    from: "Portal do Condomínio <portal@condominio-sol.example>",
    subject: "Sua senha provisória",
    text: "Sua senha provisória é: Mar#8812\nAltere-a no primeiro acesso.",
    expect: { access: true, secrets: ["Mar#8812"] },
  },
  {
    id: "pt-otp-base64",
    from: "Carteira Rápida <codigo@carteirarapida.example>",
    subject: "Código de segurança",
    text: "Código de segurança: 661 093\nVálido por 3 minutos. Nunca informe este código por telefone.",
    encoding: "base64",
    expect: { access: true, secrets: ["661093"] },
  },
];

export const accessMailsIntl: MailSpec[] = [...de, ...fr, ...es, ...pt];
