// The studio's own words in the person's language: the browser's (navigator.languages), or the one saved with
// setLanguage(). The server says a task's content (cards, reasons, the agent's words) in the task's language;
// what the studio adds around it — routes, card controls, resolutions — comes from this catalogue. A key is the
// English text; a language without a phrase shows the English one. Elements in another language than the page's
// carry a `lang` attribute (langAttrs), so a screen reader reads them with the right voice.

const STORED = "lomote.language";
export const SUPPORTED = ["en", "fr", "de", "es", "pt"];

const CATALOGUE = {
  fr: {
    "Your message above, where you chose on Main's question.": "Votre message ci-dessus, là où vous l'avez choisi sur la question de Main.",
    "Confirm": "Confirmer", "Approve": "Approuver", "Decline": "Refuser", "Keep": "Garder", "Choose": "Choisir",
    "routed to a new task:": "envoyé à une nouvelle tâche :",
    "routed as a follow-up to": "envoyé comme suite à",
    "routed directly to": "envoyé directement à",
    "handled as a quick job:": "traité comme une création rapide :",
    "answered by Main": "réponse de Main",
    "Main asks which task you mean": "Main demande de quelle tâche il s'agit",
    "task #{id}": "tâche n° {id}",
    "task #{id} “{title}”": "tâche n° {id} « {title} »",
    "workspace": "espace de travail",
    "Flow run #{id}": "exécution de Flow n° {id}",
    "{kind} card": "carte {kind}",
    "open": "ouverte", "resolved": "résolue", "cancelled": "annulée", "expired": "expirée",
    "quote": "devis", "choice": "choix", "confirm": "confirmation", "result": "résultat", "clarify": "précision",
    "Chose “{label}”{by}": "Choisi : « {label} »{by}",
    "Confirmed{by}": "Confirmé{by}",
    "Approved{by}": "Approuvé{by}",
    "Declined{by}": "Refusé{by}",
    "Asked for changes{by}: {text}": "Changements demandés{by} : {text}",
    "Answered{by}: {text}": "Répondu{by} : {text}",
    "Asked for another version{by}: {text}": "Autre version demandée{by} : {text}",
    "Kept as a task{by}": "Gardé comme tâche{by}",
    " by {name}": " par {name}",
    "Say it in your own words": "Dites-le avec vos mots",
    "What should change?": "Que faut-il changer ?",
    "Say it differently": "Le dire autrement",
    "Adjust": "Ajuster",
    "Change": "Changer",
    "Send": "Envoyer",
    "Answer: {title}": "Répondre : {title}",
    "Say what should change, then press {button}.": "Dites ce qu'il faut changer, puis appuyez sur {button}.",
    "Iterate": "Modifier",
    "↳ answering “{text}”": "↳ en réponse à « {text} »",
    "A former member": "Un ancien membre",
    "API key": "Clé d'API",
    "The agent (step {n})": "L'agent (étape {n})",
    "Checklist": "Liste des étapes",
    "Conversation": "Conversation",
    "to do": "à faire", "under way": "en cours", "done": "fait", "skipped": "ignoré",
  },
  de: {
    "Your message above, where you chose on Main's question.": "Deine Nachricht oben, dorthin, wo du es auf Mains Frage gewählt hast.",
    "Confirm": "Bestätigen", "Approve": "Genehmigen", "Decline": "Ablehnen", "Keep": "Behalten", "Choose": "Wählen",
    "routed to a new task:": "an eine neue Aufgabe geschickt:",
    "routed as a follow-up to": "als Fortsetzung geschickt an",
    "routed directly to": "direkt geschickt an",
    "handled as a quick job:": "als schneller Auftrag erledigt:",
    "answered by Main": "von Main beantwortet",
    "Main asks which task you mean": "Main fragt, welche Aufgabe du meinst",
    "task #{id}": "Aufgabe #{id}",
    "task #{id} “{title}”": "Aufgabe #{id} „{title}“",
    "workspace": "Arbeitsbereich",
    "Flow run #{id}": "Flow-Lauf #{id}",
    "{kind} card": "Karte: {kind}",
    "open": "offen", "resolved": "erledigt", "cancelled": "abgebrochen", "expired": "abgelaufen",
    "quote": "Angebot", "choice": "Auswahl", "confirm": "Bestätigung", "result": "Ergebnis", "clarify": "Rückfrage",
    "Chose “{label}”{by}": "„{label}“ gewählt{by}",
    "Confirmed{by}": "Bestätigt{by}",
    "Approved{by}": "Genehmigt{by}",
    "Declined{by}": "Abgelehnt{by}",
    "Asked for changes{by}: {text}": "Änderungen erbeten{by}: {text}",
    "Answered{by}: {text}": "Geantwortet{by}: {text}",
    "Asked for another version{by}: {text}": "Andere Version erbeten{by}: {text}",
    "Kept as a task{by}": "Als Aufgabe behalten{by}",
    " by {name}": " von {name}",
    "Say it in your own words": "Sag es mit deinen Worten",
    "What should change?": "Was soll sich ändern?",
    "Say it differently": "Anders sagen",
    "Adjust": "Anpassen",
    "Change": "Ändern",
    "Send": "Senden",
    "Answer: {title}": "Antworten: {title}",
    "Say what should change, then press {button}.": "Sag, was sich ändern soll, und drücke dann {button}.",
    "Iterate": "Ändern",
    "↳ answering “{text}”": "↳ Antwort auf „{text}“",
    "A former member": "Ein ehemaliges Mitglied",
    "API key": "API-Schlüssel",
    "The agent (step {n})": "Der Agent (Schritt {n})",
    "Checklist": "Checkliste",
    "Conversation": "Unterhaltung",
    "to do": "offen", "under way": "in Arbeit", "done": "fertig", "skipped": "übersprungen",
  },
  es: {
    "Your message above, where you chose on Main's question.": "Tu mensaje de arriba, donde lo elegiste en la pregunta de Main.",
    "Confirm": "Confirmar", "Approve": "Aprobar", "Decline": "Rechazar", "Keep": "Guardar", "Choose": "Elegir",
    "routed to a new task:": "enviado a una tarea nueva:",
    "routed as a follow-up to": "enviado como continuación a",
    "routed directly to": "enviado directamente a",
    "handled as a quick job:": "atendido como trabajo rápido:",
    "answered by Main": "respondido por Main",
    "Main asks which task you mean": "Main pregunta a qué tarea te refieres",
    "task #{id}": "tarea n.º {id}",
    "task #{id} “{title}”": "tarea n.º {id} «{title}»",
    "workspace": "espacio de trabajo",
    "Flow run #{id}": "ejecución de Flow n.º {id}",
    "{kind} card": "tarjeta de {kind}",
    "open": "abierta", "resolved": "resuelta", "cancelled": "cancelada", "expired": "caducada",
    "quote": "presupuesto", "choice": "elección", "confirm": "confirmación", "result": "resultado", "clarify": "aclaración",
    "Chose “{label}”{by}": "Elegido «{label}»{by}",
    "Confirmed{by}": "Confirmado{by}",
    "Approved{by}": "Aprobado{by}",
    "Declined{by}": "Rechazado{by}",
    "Asked for changes{by}: {text}": "Cambios pedidos{by}: {text}",
    "Answered{by}: {text}": "Respondido{by}: {text}",
    "Asked for another version{by}: {text}": "Otra versión pedida{by}: {text}",
    "Kept as a task{by}": "Guardado como tarea{by}",
    " by {name}": " por {name}",
    "Say it in your own words": "Dilo con tus palabras",
    "What should change?": "¿Qué debe cambiar?",
    "Say it differently": "Decirlo de otra forma",
    "Adjust": "Ajustar",
    "Change": "Cambiar",
    "Send": "Enviar",
    "Answer: {title}": "Responder: {title}",
    "Say what should change, then press {button}.": "Di qué debe cambiar y pulsa {button}.",
    "Iterate": "Cambiar",
    "↳ answering “{text}”": "↳ en respuesta a «{text}»",
    "A former member": "Un antiguo miembro",
    "API key": "Clave de API",
    "The agent (step {n})": "El agente (paso {n})",
    "Checklist": "Lista de pasos",
    "Conversation": "Conversación",
    "to do": "pendiente", "under way": "en curso", "done": "hecho", "skipped": "omitido",
  },
  pt: {
    "Your message above, where you chose on Main's question.": "A sua mensagem acima, para onde a escolheu na pergunta do Main.",
    "Confirm": "Confirmar", "Approve": "Aprovar", "Decline": "Recusar", "Keep": "Guardar", "Choose": "Escolher",
    "routed to a new task:": "enviado para uma nova tarefa:",
    "routed as a follow-up to": "enviado como continuação de",
    "routed directly to": "enviado diretamente para",
    "handled as a quick job:": "tratado como trabalho rápido:",
    "answered by Main": "respondido pelo Main",
    "Main asks which task you mean": "O Main pergunta a que tarefa se refere",
    "task #{id}": "tarefa n.º {id}",
    "task #{id} “{title}”": "tarefa n.º {id} «{title}»",
    "workspace": "espaço de trabalho",
    "Flow run #{id}": "execução de Flow n.º {id}",
    "{kind} card": "cartão de {kind}",
    "open": "aberto", "resolved": "resolvido", "cancelled": "cancelado", "expired": "expirado",
    "quote": "orçamento", "choice": "escolha", "confirm": "confirmação", "result": "resultado", "clarify": "esclarecimento",
    "Chose “{label}”{by}": "Escolhido «{label}»{by}",
    "Confirmed{by}": "Confirmado{by}",
    "Approved{by}": "Aprovado{by}",
    "Declined{by}": "Recusado{by}",
    "Asked for changes{by}: {text}": "Alterações pedidas{by}: {text}",
    "Answered{by}: {text}": "Respondido{by}: {text}",
    "Asked for another version{by}: {text}": "Outra versão pedida{by}: {text}",
    "Kept as a task{by}": "Guardado como tarefa{by}",
    " by {name}": " por {name}",
    "Say it in your own words": "Diga-o com as suas palavras",
    "What should change?": "O que deve mudar?",
    "Say it differently": "Dizer de outra forma",
    "Adjust": "Ajustar",
    "Change": "Alterar",
    "Send": "Enviar",
    "Answer: {title}": "Responder: {title}",
    "Say what should change, then press {button}.": "Diga o que deve mudar e carregue em {button}.",
    "Iterate": "Alterar",
    "↳ answering “{text}”": "↳ em resposta a «{text}»",
    "A former member": "Um antigo membro",
    "API key": "Chave de API",
    "The agent (step {n})": "O agente (passo {n})",
    "Checklist": "Lista de passos",
    "Conversation": "Conversa",
    "to do": "por fazer", "under way": "em curso", "done": "feito", "skipped": "ignorado",
  },
};

function chosen() {
  const saved = (() => { try { return localStorage.getItem(STORED); } catch { return null; } })();
  const wanted = [saved, ...(navigator.languages || [navigator.language])].filter(Boolean);
  for (const tag of wanted) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (SUPPORTED.includes(base)) return base;
  }
  return "en";
}

let current = chosen();

/** The studio's language now (two letters). */
export function language() {
  return current;
}

/** Choose the studio's language (saved in this browser); null goes back to the browser's own. */
export function setLanguage(tag) {
  try {
    if (tag) localStorage.setItem(STORED, tag);
    else localStorage.removeItem(STORED);
  } catch { /* private mode: for this page only */ }
  current = tag && SUPPORTED.includes(tag) ? tag : chosen();
}

/** `key` (the English text) in the studio's language, with its {placeholders} filled. */
export function t(key, values = {}) {
  const said = (CATALOGUE[current] || {})[key] ?? key;
  return said.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/** The `lang` attribute for an element the studio writes in its own language, when it is not the page's. */
export function langAttrs() {
  return current === (document.documentElement.lang || "en").slice(0, 2) ? {} : { lang: current };
}
