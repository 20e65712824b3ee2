/**
 * Harmless mails in German, French, Spanish, Portuguese, Chinese and Japanese with numbers and
 * links that look like codes. Invented senders on .example domains.
 */
import type { MailSpec } from "./compose.js";

const de: MailSpec[] = [
  {
    id: "h-de-bestellung",
    from: "Hausrat24 <bestellung@hausrat24.example>",
    subject: "Ihre Bestellung 302-5581920 ist eingegangen",
    text: "Vielen Dank für Ihre Bestellung!\n\nBestellnummer: 302-5581920\nKundennummer: 88120394\nGesamtbetrag: 89,97 €\n\nLieferung voraussichtlich am 06.03.2025.",
    expect: { access: false, keep: ["302-5581920", "88120394", "89,97 €", "06.03.2025"] },
  },
  {
    id: "h-de-sendung",
    from: "Paketblitz <sendung@paketblitz.example>",
    subject: "Ihre Sendung kommt heute",
    html: `<p>Sendungsnummer: <b>00340434161234567890</b></p><p>Zustellung heute zwischen 10:00 und 12:00 Uhr.</p><p><a href="https://paketblitz.example/sendungsverfolgung?nr=00340434161234567890">Sendung verfolgen</a></p>`,
    expect: { access: false, keep: ["00340434161234567890", "https://paketblitz.example/sendungsverfolgung?nr=00340434161234567890"] },
  },
  {
    id: "h-de-rechnung",
    from: "Stadtwerke Kiel <rechnung@stadtwerke-kiel.example>",
    subject: "Ihre Rechnung Nr. 2025-118830",
    text: "Rechnungsnummer: 2025-118830\nVertragsnummer: 400 118 2291\nBetrag: 64,20 EUR, fällig am 15.03.2025\nIBAN: DE02 1203 0000 0000 2020 51",
    expect: { access: false, keep: ["2025-118830", "400 118 2291", "64,20 EUR", "DE02 1203 0000 0000 2020 51"] },
  },
  {
    id: "h-de-teams-einladung",
    from: "Jonas Weber <jonas.weber@agentur-weber.example>",
    subject: "Besprechung: Projektstart",
    text: "Microsoft Teams-Besprechung\n\nÜber Ihren Computer oder die mobile App teilnehmen:\nhttps://teams.microsoft.com/l/meetup-join/19%3ameeting_ZmQ4YjNk%40thread.v2/0\n\nBesprechungs-ID: 389 552 017 846\nKennung: tW4nB9\n\nTelefonische Einwahl: +49 69 365 003 100,,661238940#\nKonferenz-ID: 661 238 940#",
    expect: { access: false, keep: ["389 552 017 846", "tW4nB9", "661 238 940"] },
  },
  {
    id: "h-de-schule",
    from: "Grundschule am Park <sekretariat@gs-park.example>",
    subject: "Elternabend Klasse 3b",
    text: "Liebe Eltern,\n\nder Elternabend der Klasse 3b findet am Dienstag, 11.03.2025, um 19:30 Uhr in Raum 214 statt.\nBitte melden Sie sich bis zum 07.03. im Sekretariat (Tel. 0431 880 2210) an.\n\nMit freundlichen Grüßen\nFrau Schmidt",
    expect: { access: false, keep: ["Raum 214", "0431 880 2210", "11.03.2025"] },
  },
  {
    id: "h-de-gutschein",
    from: "Modehaus Linde <newsletter@modehaus-linde.example>",
    subject: "15 % Rabatt nur bis Sonntag",
    html: `<p>Mit dem Gutscheincode <b>LINDE15</b> sparen Sie 15 % auf die neue Frühjahrskollektion.</p><p><a href="https://news.modehaus-linde.example/c/Ab12Cd34Ef56Gh78">Jetzt einkaufen</a></p><p><a href="https://news.modehaus-linde.example/c/Zy98Xw76Vu54Ts32">Newsletter abbestellen</a></p>`,
    expect: { access: false, keep: ["LINDE15", "Ab12Cd34Ef56Gh78"] },
  },
  {
    id: "h-de-bahn",
    from: "Bahnfreund <buchung@bahnfreund.example>",
    subject: "Ihre Fahrkarte: Auftragsnummer Q7ZK2M",
    text: "Auftragsnummer: Q7ZK2M\nICE 1581 Hamburg Hbf 08:01 → Berlin Hbf 09:44, Wagen 9, Platz 75\nPreis: 49,90 €\nIhr Ticket: https://www.bahnfreund.example/ticket/Q7ZK2M",
    expect: { access: false, keep: ["Q7ZK2M", "ICE 1581", "49,90 €", "https://www.bahnfreund.example/ticket/Q7ZK2M"] },
  },
  {
    id: "h-de-arzt-termin",
    from: "Praxis Dr. Berg <termine@praxis-berg.example>",
    subject: "Terminbestätigung",
    html: `<p>Ihr Termin am 12.03.2025 um 08:40 Uhr ist reserviert (Termin-Nr. 55120).</p><p><a href="https://praxis-berg.example/termin/bestaetigen?t=55120&amp;h=Kd82Ls91Qp03Zw47">Termin bestätigen</a> · <a href="https://praxis-berg.example/termin/absagen?t=55120&amp;h=Kd82Ls91Qp03Zw47">Termin absagen</a></p>`,
    expect: { access: false, keep: ["55120", "Kd82Ls91Qp03Zw47"] },
  },
];

const fr: MailSpec[] = [
  {
    id: "h-fr-commande",
    from: "La Boutique du Thé <commandes@boutique-the.example>",
    subject: "Confirmation de votre commande n° 100482917",
    text: "Merci pour votre commande !\n\nNuméro de commande : 100482917\nMontant total : 42,50 €\nLivraison prévue le 05/03/2025 en Colissimo.\nNuméro de suivi : 6A12345678901",
    expect: { access: false, keep: ["100482917", "42,50 €", "6A12345678901"] },
  },
  {
    id: "h-fr-multipart-newsletter",
    from: "Le Fournil <lettre@lefournil.example>",
    subject: "La lettre du Fournil — mars",
    text: "Atelier pain au levain le samedi 15 mars à 10 h (12 places, 25 €).\nRéservez : https://lefournil.example/ateliers/levain-15-03\nSe désabonner : https://lefournil.example/u/Dz91Kq28Lm47",
    html: `<p>Atelier pain au levain le samedi 15 mars à 10 h (12 places, 25&nbsp;€).</p><p><a href="https://lefournil.example/ateliers/levain-15-03">Réserver ma place</a></p><p><a href="https://lefournil.example/u/Dz91Kq28Lm47">Se désabonner</a></p>`,
    expect: { access: false, keep: ["https://lefournil.example/ateliers/levain-15-03", "25 €"] },
  },
  {
    id: "h-fr-facture",
    from: "Électricité Lumière <facture@lumiere-energie.example>",
    subject: "Votre facture de février",
    text: "Facture n° FA-2025-02-77812\nRéférence client : 3004 1182 77\nMontant : 96,32 € prélevé le 10 mars\nEspace client : https://lumiere-energie.example/espace-client",
    expect: { access: false, keep: ["FA-2025-02-77812", "3004 1182 77", "96,32 €"] },
  },
  {
    id: "h-fr-zoom-reunion",
    from: "Claire Dubois <claire@atelier-dubois.example>",
    subject: "Réunion Zoom : point hebdomadaire",
    text: "Claire Dubois vous invite à une réunion Zoom planifiée.\n\nParticiper à la réunion Zoom\nhttps://us02web.zoom.us/j/81234567890?pwd=TWc0cE9kRnBlbkN6RGpaVmNRQT09\n\nID de réunion : 812 3456 7890\nCode secret : 550913",
    expect: { access: false, keep: ["812 3456 7890", "550913", "https://us02web.zoom.us/j/81234567890?pwd=TWc0cE9kRnBlbkN6RGpaVmNRQT09"] },
  },
  {
    id: "h-fr-ecole",
    from: "École Jules-Ferry <direction@ecole-jf.example>",
    subject: "Sortie scolaire du 14 mars",
    text: "Chers parents,\n\nLa sortie au musée aura lieu le vendredi 14 mars. Départ du car à 8 h 30 devant l'école, retour vers 16 h.\nParticipation : 12 € à régler avant le 7 mars.\nPour toute question : 04 72 10 88 20.",
    expect: { access: false, keep: ["04 72 10 88 20", "12 €"] },
  },
  {
    id: "h-fr-code-promo",
    from: "Vélo Vert <promo@velovert.example>",
    subject: "-10 % sur les casques",
    html: `<p>Profitez de -10 % avec le code promo <b>CASQUE10</b> jusqu'au 15/03.</p><p><a href="https://t.velovert.example/r/?id=h4c8d2e6f,aa11bb22&amp;p1=PromoCasque2025">J'en profite</a></p>`,
    expect: { access: false, keep: ["CASQUE10", "PromoCasque2025"] },
  },
  {
    id: "h-fr-reservation-train",
    from: "Trainville <voyages@trainville.example>",
    subject: "Votre réservation est confirmée",
    text: "Référence de dossier : QPLMZT\nTGV 6617 Paris Gare de Lyon 10:04 → Lyon Part-Dieu 12:01\nVoiture 14, place 63\nPrix : 39,00 €",
    expect: { access: false, keep: ["QPLMZT", "TGV 6617", "39,00 €"] },
  },
  {
    id: "h-fr-mutuelle-remboursement",
    from: "MaMutuelle <info@mamutuelle.example>",
    subject: "Remboursement effectué",
    text: "Nous avons effectué un remboursement de 23,40 € pour votre consultation du 24/02/2025.\nN° d'adhérent : 1180 4472 09\nConnectez-vous à votre espace adhérent pour le détail : https://mamutuelle.example/espace",
    expect: { access: false, keep: ["23,40 €", "1180 4472 09", "https://mamutuelle.example/espace"] },
  },
];

const es: MailSpec[] = [
  {
    id: "h-es-pedido",
    from: "Tienda Sol <pedidos@tiendasol.example>",
    subject: "Tu pedido 40-118293 está en camino",
    text: "¡Hola Ana!\n\nTu pedido número 40-118293 ha sido enviado.\nNúmero de seguimiento: ES2025031800042\nImporte: 59,95 €\n\nSigue tu envío: https://tiendasol.example/seguimiento/ES2025031800042",
    expect: { access: false, keep: ["40-118293", "ES2025031800042", "59,95 €"] },
  },
  {
    id: "h-es-factura",
    from: "Telefonía Brisa <facturas@brisa-tel.example>",
    subject: "Factura de marzo",
    text: "Factura: F-2025/0309-4471\nNúmero de cliente: 7700281934\nTotal: 32,90 € (IVA incluido)\nLínea: 612 345 678",
    expect: { access: false, keep: ["F-2025/0309-4471", "7700281934", "32,90 €", "612 345 678"] },
  },
  {
    id: "h-es-reunion-meet",
    from: "Lucía Gómez <lucia@estudio-gomez.example>",
    subject: "Invitación: reunión de equipo",
    text: "Reunión de equipo — jueves 6 de marzo, 10:00–11:00\n\nUnirse con Google Meet: https://meet.google.com/abc-mnop-xyz\nUnirse por teléfono: +34 910 55 82 11 PIN: 902 117 445#",
    expect: { access: false, keep: ["abc-mnop-xyz", "902 117 445", "+34 910 55 82 11"] },
  },
  {
    id: "h-es-vuelo",
    from: "Aerolíneas Brisa <reservas@aerobrisa.example>",
    subject: "Confirmación de reserva",
    text: "Código de reserva (localizador): XH7P2Q\nVuelo AB 3310 Madrid → Lisboa, 14/03/2025 09:15\nAsiento 22A\nTotal pagado: 84,60 €",
    expect: { access: false, keep: ["XH7P2Q", "AB 3310", "84,60 €"] },
  },
  {
    id: "h-es-cupon",
    from: "Pizzería Napoli <ofertas@napoli.example>",
    subject: "2x1 este martes",
    html: `<p>Este martes 2x1 en pizzas medianas con el cupón <b>NAPOLI2X1</b>.</p><p><a href="https://napoli.example/r/Cup0nNap0l12025Xy">Pedir ahora</a></p>`,
    expect: { access: false, keep: ["NAPOLI2X1", "Cup0nNap0l12025Xy"] },
  },
  {
    id: "h-es-colegio",
    from: "Colegio San Jorge <secretaria@csanjorge.example>",
    subject: "Reunión de padres",
    text: "Estimadas familias:\n\nLa reunión de padres de 4.º B será el 13 de marzo a las 18:00 en el aula 12.\nContacto: 91 445 22 18 (secretaría).",
    expect: { access: false, keep: ["91 445 22 18", "aula 12"] },
  },
  {
    id: "h-es-banco-extracto",
    from: "Banco Solar <extractos@bancosolar.example>",
    subject: "Tu extracto de febrero",
    text: "Cuenta terminada en 7731\nSaldo final: 2.418,55 €\nPeriodo: 01/02/2025 - 28/02/2025\nConsulta el detalle iniciando sesión en https://bancosolar.example/banca",
    expect: { access: false, keep: ["7731", "2.418,55 €", "https://bancosolar.example/banca"] },
  },
];

const pt: MailSpec[] = [
  {
    id: "h-pt-pedido",
    from: "Loja Azul <pedidos@lojaazul.example>",
    subject: "Pedido nº 558120 confirmado",
    text: "Obrigado pela compra!\n\nNúmero do pedido: 558120\nValor total: R$ 149,90\nCódigo de rastreio: BR123456789BR\nPrevisão de entrega: 10/03/2025",
    expect: { access: false, keep: ["558120", "R$ 149,90", "BR123456789BR"] },
  },
  {
    id: "h-pt-fatura",
    from: "Energia Viva <fatura@energiaviva.example>",
    subject: "Sua fatura de março",
    text: "Fatura nº 0301-882014\nCódigo do cliente: 44120087\nValor: R$ 212,37, vencimento 20/03/2025\nLinha digitável: 34191.79001 01043.510047 91020.150008 1 99990000021237",
    expect: { access: false, keep: ["0301-882014", "44120087", "R$ 212,37", "34191.79001 01043.510047 91020.150008 1 99990000021237"] },
  },
  {
    id: "h-pt-reuniao-zoom",
    from: "Rafael Costa <rafael@costa-arq.example>",
    subject: "Reunião Zoom: revisão do projeto",
    text: "Entrar na reunião Zoom\nhttps://zoom.us/j/93817264509?pwd=UkZkT2xWc1pRRm5QbE1vUT09\n\nID da reunião: 938 1726 4509\nSenha: 771204",
    expect: { access: false, keep: ["938 1726 4509", "771204"] },
  },
  {
    id: "h-pt-escola",
    from: "Escola Primavera <secretaria@escolaprimavera.example>",
    subject: "Passeio escolar",
    text: "Prezados responsáveis,\n\nO passeio ao zoológico será no dia 18/03, saída às 8h. Valor: R$ 35,00.\nDúvidas: (11) 3456-7890.",
    expect: { access: false, keep: ["(11) 3456-7890", "R$ 35,00"] },
  },
  {
    id: "h-pt-cupom",
    from: "Farmácia Bem <ofertas@farmaciabem.example>",
    subject: "Cupom de 10% para você",
    html: `<p>Use o cupom <b>BEM10</b> e ganhe 10% de desconto.</p><p><a href="https://click.farmaciabem.example/track/click?u=Cup0mBem10Xy9&amp;id=Of3rt4">Ver ofertas</a></p>`,
    expect: { access: false, keep: ["BEM10", "Cup0mBem10Xy9"] },
  },
  {
    id: "h-pt-voo",
    from: "Voa Brasil <reservas@voabrasil.example>",
    subject: "Sua reserva está confirmada",
    text: "Código da reserva: PQ8ZXT\nVoo VB 2201 São Paulo (GRU) → Lisboa (LIS), 14/03/2025 22:10\nPassageira: ANA LIMA",
    expect: { access: false, keep: ["PQ8ZXT", "VB 2201"] },
  },
  {
    id: "h-pt-nota-fiscal",
    from: "Mercado Bom <nfe@mercadobom.example>",
    subject: "Nota fiscal eletrônica",
    text: "Chave de acesso da NF-e: 3525 0312 3456 7800 0190 5500 1000 0012 3410 0001 2345\nValor: R$ 87,12",
    expect: { access: false, keep: ["3525 0312 3456 7800 0190 5500 1000 0012 3410 0001 2345", "R$ 87,12"] },
  },
];

const zh: MailSpec[] = [
  {
    id: "h-zh-order",
    from: "优选商城 <order@youxuan.example>",
    subject: "订单已发货",
    text: "您的订单（订单号：202503021845012）已发货。\n快递公司：顺丰速运\n运单号：SF1234567890123\n订单金额：¥268.00",
    expect: { access: false, keep: ["202503021845012", "SF1234567890123", "¥268.00"] },
  },
  {
    id: "h-zh-meeting",
    from: "张伟 <zhangwei@huaxin.example>",
    subject: "会议邀请：季度总结",
    text: "会议主题：季度总结\n会议时间：2025/03/05 14:00-15:00\n会议号：662 839 105\n会议密码：4821\n会议链接：https://meeting.huaxin.example/j/662839105",
    expect: { access: false, keep: ["662 839 105", "4821", "https://meeting.huaxin.example/j/662839105"] },
  },
  {
    id: "h-zh-invoice",
    from: "电信营业厅 <bill@dianxin.example>",
    subject: "您的电子发票",
    text: "发票号码：24110000000012345678\n发票金额：¥99.00\n客户号：8801223941\n如有疑问请拨打客服电话 10000。",
    expect: { access: false, keep: ["24110000000012345678", "¥99.00", "8801223941"] },
  },
  {
    id: "h-zh-school",
    from: "阳光小学 <office@yangguang.example>",
    subject: "家长会通知",
    text: "各位家长：\n\n三年级二班家长会定于3月12日（周三）18:30在301教室召开。\n联系电话：021-6688 1234。",
    expect: { access: false, keep: ["021-6688 1234", "301"] },
  },
  {
    id: "h-zh-coupon",
    from: "美味外卖 <promo@meiwei.example>",
    subject: "送您一张优惠券",
    html: `<p>优惠码：<b>MW2025SPRING</b>，满50减10，有效期至3月31日。</p><p><a href="https://meiwei.example/activity/spring?from=mail&amp;cid=Sp2025Cp9Xy">立即使用</a></p>`,
    expect: { access: false, keep: ["MW2025SPRING", "Sp2025Cp9Xy"] },
  },
  {
    id: "h-zh-flight",
    from: "蓝天航空 <booking@lantian.example>",
    subject: "机票预订成功",
    text: "预订编号：NX8Q2P\n航班：LT5309 上海浦东 08:35 → 北京首都 10:50\n座位：31K\n票号：781-2294018837",
    expect: { access: false, keep: ["NX8Q2P", "LT5309", "781-2294018837"] },
  },
];

const ja: MailSpec[] = [
  {
    id: "h-ja-order",
    from: "さくら書店 <order@sakura-shoten.example>",
    subject: "【さくら書店】ご注文ありがとうございます",
    text: "ご注文番号：250302-0048817\nご注文金額：3,520円（税込）\nお届け予定日：2025年3月6日\nお問い合わせ番号：4412-2918-3310",
    expect: { access: false, keep: ["250302-0048817", "3,520円", "4412-2918-3310"] },
  },
  {
    id: "h-ja-zoom",
    from: "佐藤 健 <sato@mirai-design.example>",
    subject: "Zoomミーティングのご案内",
    text: "佐藤 健さんがあなたを予約されたZoomミーティングに招待しています。\n\nZoomミーティングに参加する\nhttps://us06web.zoom.us/j/87712345678?pwd=QWxQa1lCTnRrV2hGTWlaRz09\n\nミーティングID: 877 1234 5678\nパスコード: 662019",
    expect: { access: false, keep: ["877 1234 5678", "662019"] },
  },
  {
    id: "h-ja-invoice",
    from: "ひかり電力 <seikyu@hikari-denryoku.example>",
    subject: "3月分ご請求金額のお知らせ",
    text: "お客様番号：0123-456-789\nご請求金額：8,214円\nお支払期限：2025年3月25日\nマイページ：https://hikari-denryoku.example/mypage",
    expect: { access: false, keep: ["0123-456-789", "8,214円", "https://hikari-denryoku.example/mypage"] },
  },
  {
    id: "h-ja-school",
    from: "みなと小学校 <info@minato-es.example>",
    subject: "保護者会のお知らせ",
    text: "保護者各位\n\n3月14日（金）15時より、3年2組の教室で保護者会を開催します。\nご不明な点は学校（03-1234-5678）までお問い合わせください。",
    expect: { access: false, keep: ["03-1234-5678"] },
  },
  {
    id: "h-ja-coupon",
    from: "ポイントモール <campaign@pointmall.example>",
    subject: "春のクーポンプレゼント",
    html: `<p>クーポンコード：<b>HARU500</b>（有効期限：2025年3月31日）</p><p><a href="https://pointmall.example/campaign/haru?utm_source=mail&amp;cp=Haru2025Cpn88">クーポンを使う</a></p>`,
    expect: { access: false, keep: ["HARU500", "Haru2025Cpn88"] },
  },
  {
    id: "h-ja-reservation",
    from: "ホテル湊 <reserve@hotel-minato.example>",
    subject: "ご予約確認",
    text: "予約番号：HM-20250314-0082\nチェックイン：2025年3月14日 15:00\n宿泊料金：18,700円\nお部屋：ツイン 1205号室",
    expect: { access: false, keep: ["HM-20250314-0082", "18,700円", "1205"] },
  },
  {
    id: "h-ja-delivery",
    from: "ヤマネコ便 <info@yamaneko.example>",
    subject: "お荷物お届けのお知らせ",
    text: "伝票番号：4829-1730-2281 のお荷物を本日お届けします。\nお届け予定時間：14時〜16時\n再配達のご依頼：https://yamaneko.example/redelivery?no=482917302281",
    expect: { access: false, keep: ["4829-1730-2281", "https://yamaneko.example/redelivery?no=482917302281"] },
  },
];

export const harmlessMailsIntl: MailSpec[] = [...de, ...fr, ...es, ...pt, ...zh, ...ja];
