/**
 * Access mails in Chinese (simplified and traditional) and Japanese, with raw messages in GB2312
 * and Shift_JIS. Invented senders on .example domains.
 */
import type { MailSpec } from "./compose.js";

const zh: MailSpec[] = [
  {
    id: "zh-otp-plain",
    from: "云途账户 <no-reply@yuntu.example>",
    subject: "您的验证码",
    text: "您好！\n\n您的验证码是：578203，10分钟内有效。请勿将验证码告知他人。\n\n云途团队",
    expect: { access: true, secrets: ["578203"] },
  },
  {
    id: "zh-otp-gb2312",
    raw: [
      "From: =?GB2312?B?0MfS6dTG?= <noreply@xinghe.example>",
      "To: ana@home.example",
      "Subject: =?GB2312?B?0Me609TGtcfCvNHp1qTC6w==?=",
      "Date: Sun, 02 Mar 2025 10:00:00 +0800",
      "Message-ID: <corpus.zh-otp-gb2312@mail.example>",
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=GB2312",
      "Content-Transfer-Encoding: base64",
      "",
      "1/C+tLXE08O7p6O6CgrE+tX91Nq1x8K80Me609TG1cu7p6Os0enWpMLrzqogMyA5IDEgMiAwIDUg",
      "o6w1t9bW08Ta09DQp6GjCsjnt8exvsjLstnX96Osx+u69sLUsb7Tyrz+oaMKCtDHutPUxs3FttM=",
      "",
    ].join("\r\n"),
    expect: { access: true, secrets: ["391205"] },
  },
  {
    id: "zh-reset-link",
    from: "书香网 <service@shuxiang.example>",
    subject: "重置密码",
    html: `<p>您好，我们收到了重置密码的请求。</p><p><a href="https://shuxiang.example/account/reset?token=8e7d6c5b4a3928170f6e5d4c">点击这里重置密码</a></p><p>如非本人操作，请忽略本邮件。</p>`,
    expect: { access: true, secrets: ["8e7d6c5b4a3928170f6e5d4c"] },
  },
  {
    id: "zh-traditional-otp",
    from: "樂購網 <account@legou.example>",
    subject: "您的驗證碼",
    text: "親愛的會員您好：\n\n您的登入驗證碼為 264 819，請於5分鐘內輸入。\n請勿將驗證碼提供給任何人。",
    expect: { access: true, secrets: ["264819"] },
  },
  {
    id: "zh-activate-email",
    from: "知学 <hello@zhixue.example>",
    subject: "激活您的账号",
    html: `<p>感谢注册知学！请点击下面的按钮验证邮箱并激活账号：</p><p><a href="https://e.zhixue.example/c/Rm9vQmFyQmF6UXV4MTIzNDU2Nzg5MA">验证邮箱</a></p><p>客服电话：400-820-1234</p>`,
    expect: { access: true, secrets: ["Rm9vQmFyQmF6UXV4MTIzNDU2Nzg5MA"], keep: ["400-820-1234"] },
  },
  {
    id: "zh-otp-html-fullwidth",
    from: "快付钱包 <security@kuaifu.example>",
    subject: "安全验证",
    html: `<p>您正在进行支付操作，动态码：<b>８３０６４２</b></p><p>动态码5分钟内有效，切勿泄露。</p>`,
    expect: { access: true, secrets: ["830642", "８３０６４２"] },
  },
  {
    id: "zh-new-device",
    from: "微聊 <safe@weiliao.example>",
    subject: "新设备登录提醒",
    text: "您的账号于2025-03-02 21:14在新设备上登录。\n如果是您本人操作，请输入确认码 7381 完成验证。\n如果不是您本人，请立即修改密码：https://weiliao.example/security/password?s=Qz8Wx7Ec6Rv5Tb4Yn3",
    expect: { access: true, secrets: ["7381", "Qz8Wx7Ec6Rv5Tb4Yn3"], keep: ["2025-03-02"] },
  },
  {
    id: "zh-otp-subject",
    from: "好运外卖 <noreply@haoyun.example>",
    subject: "【好运外卖】验证码 905136",
    text: "验证码 905136，用于登录，5分钟内有效。",
    expect: { access: true, secrets: ["905136"] },
  },
];

const ja: MailSpec[] = [
  {
    id: "ja-otp-plain",
    from: "みどり銀行 <info@midori-bank.example>",
    subject: "【みどり銀行】ワンタイムパスワードのお知らせ",
    text: "いつもみどり銀行をご利用いただきありがとうございます。\n\nワンタイムパスワード：493026\n\n有効期限は発行から10分間です。\n心当たりがない場合は、お手数ですが下記までご連絡ください。\nみどり銀行 カスタマーセンター 0120-123-456",
    expect: { access: true, secrets: ["493026"], keep: ["0120-123-456"] },
  },
  {
    id: "ja-otp-shift-jis",
    raw: [
      "From: sakura-shoten <support@sakura-shoten.example>",
      "To: ana@home.example",
      "Subject: =?Shift_JIS?B?gXmCs4KtguePkZNYgXqURo/Yg1KBW4NogsyCqJJtgueCuQ==?=",
      "Date: Sun, 02 Mar 2025 11:00:00 +0900",
      "Message-ID: <corpus.ja-otp-shift-jis@mail.example>",
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=Shift_JIS",
      "Content-Transfer-Encoding: base64",
      "",
      "jlKTY5dsCgqCooLCguCCspeYl3CCoILogqqCxoKkgrKCtIKigtyCt4FCCoONg0+DQ4OTgsyCvYLf",
      "gsyURo/Yg1KBW4NogvCCqJGXguiCtYLcgreBQgoKlEaP2INSgVuDaIFGglWCT4JTgleCUIJWCgqB",
      "poKxgsyDUoFbg2iCzJdMjPiK+ozAgs0zMJWqgsWCt4FCCoGmkFOTloK9guiCqoLIgqKP6o2Hgs2B",
      "QYKxgsyDgYFbg4uC8JRqivyCtYLEgq2CvoKzgqKBQgoKgrOCrYLnj5GTWCCDSoNYg16DfYFbg1SD",
      "fIFbg2c=",
      "",
    ].join("\r\n"),
    expect: { access: true, secrets: ["604817", "６０４８１７"] },
  },
  {
    id: "ja-confirm-code-html",
    from: "ことのはノート <no-reply@kotonoha.example>",
    subject: "確認コードをお送りします",
    html: `<p>ご登録ありがとうございます。</p><p>確認コードは「<strong>3 8 2 7 1 5</strong>」です。</p><p>画面に入力して、メールアドレスの確認を完了してください。</p>`,
    expect: { access: true, secrets: ["382715"] },
  },
  {
    id: "ja-reset-link",
    from: "たびログ <account@tabilog.example>",
    subject: "パスワード再設定のご案内",
    html: `<p>パスワード再設定のリクエストを受け付けました。</p><p>以下のリンクから新しいパスワードを設定してください。</p><p><a href="https://tabilog.example/password/reset/f3e2d1c0b9a8f7e6d5c4b3a2">パスワードを再設定する</a></p><p>※リンクの有効期限は24時間です。</p>`,
    expect: { access: true, secrets: ["f3e2d1c0b9a8f7e6d5c4b3a2"] },
  },
  {
    id: "ja-login-link-plain",
    from: "まなびば <login@manabiba.example>",
    subject: "ログイン用リンク",
    text: "以下のURLをクリックするとログインできます。\nhttps://manabiba.example/auth/login?token=Kj7Hg6Fd5Sa4Lk3Jh2Gf1\n\nこのURLは15分間有効です。",
    expect: { access: true, secrets: ["Kj7Hg6Fd5Sa4Lk3Jh2Gf1"] },
  },
  {
    id: "ja-security-code-fullwidth",
    from: "ポイントモール <security@pointmall.example>",
    subject: "セキュリティコード",
    text: "セキュリティコード：７７１３０９\n\n他人に教えないでください。有効期限は5分です。",
    expect: { access: true, secrets: ["771309", "７７１３０９"] },
  },
  {
    id: "ja-new-device",
    from: "クラウド写真館 <info@cloudphoto.example>",
    subject: "新しいデバイスからのログイン",
    html: `<p>新しいデバイスからログインがありました（2025年3月2日 22:10、東京）。</p><p>ご本人の場合は、以下のボタンから承認してください。</p><p><a href="https://cloudphoto.example/device/approve?req=Ur7Yt6Re5Wq4Zx3Cv2Bn1">承認する</a></p><p>お心当たりがない場合は、パスワードを変更してください。</p>`,
    expect: { access: true, secrets: ["Ur7Yt6Re5Wq4Zx3Cv2Bn1"] },
  },
  {
    id: "ja-otp-qp",
    from: "ゆうびんアプリ <no-reply@yubin-app.example>",
    subject: "認証番号のお知らせ",
    text: "認証番号は 5 0 9 2 です。\nアプリの画面に入力してください。",
    encoding: "quoted-printable",
    expect: { access: true, secrets: ["5092"] },
  },
  {
    id: "ja-temp-password",
    from: "社内ポータル <portal@kaisha.example>",
    subject: "仮パスワード発行のお知らせ",
    text: "仮パスワード：Ki7-Mz3q\n初回ログイン後に変更してください。",
    expect: { access: true, secrets: ["Ki7-Mz3q"] },
  },
];

export const accessMailsCjk: MailSpec[] = [...zh, ...ja];
