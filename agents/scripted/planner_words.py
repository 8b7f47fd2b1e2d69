"""What the scripted planner says in German, Spanish and Portuguese (English and French are in planner.py, beside
the code that says them). Same keys and placeholders as WORDS["en"]: tests/agents/test_planner_words.py checks."""

DE: dict[str, str] = {
    "intro": "Lomotes geskripteter Planer (kein LLM):",
    "unknown_check": "das Ergebnis von {names} ist unbekannt, daher lese ich zuerst den Stand der Aufgabe.",
    "unknown_blind": (
        "das Ergebnis von {names} ist unbekannt und ich kann den Stand der Aufgabe nicht lesen, daher mache ich "
        "nichts weiter."
    ),
    "planning": "ich teile die Anfrage in {n} Schritt(e) auf und speichere sie:",
    "plan_failed": "ich konnte den Plan nicht speichern ({error}). Geplante Schritte:",
    "no_planning_tool": "ich kann hier keine Checkliste speichern (kein Werkzeug update_checklist). Geplante Schritte:",
    "ask_brief": (
        "Ich bin Lomotes geskripteter Planer, kein LLM. Was soll ich machen? Beschreib es in einem Satz (zum "
        "Beispiel: eine Serie von 3 Retro-Plakaten)."
    ),
    "ask_question": (
        "Ich bin Lomotes geskripteter Planer, kein LLM: Freie Fragen wie „{question}“ kann ich nicht beantworten. "
        "Was soll ich tun?"
    ),
    "opt_image": "Ein Bild",
    "opt_video": "Ein Video",
    "opt_document": "Ein Dokument",
    "opt_keep": "Den Plan so lassen",
    "opt_new": "Ich beschreibe es als neue Aufgabe",
    "loading": "um an {items} zu arbeiten, lade ich die Werkzeuge für {domains}.",
    "generating": "ich starte {items}.",
    "started_evidence": "Mit {tool} vom geskripteten Planer angefragt (Schritt {step}).",
    "done_evidence": "Element {artifact} von {tool} erstellt.",
    "attached_evidence": "Element {artifact} ist diesem Schritt zugeordnet.",
    "recording_done": "{items}: das Element existiert, daher markiere ich es als erledigt.",
    "plan_header": "Plan für „{title}“ ({done}/{total} erledigt):",
    "all_done": "Alle {total} Schritte sind erledigt.",
    "underway": "In Arbeit (früher gestartet, nicht wiederholt): {items}.",
    "cannot": "Was ich nicht machen konnte:",
    "no_tool": "{item}: Mir steht kein Werkzeug für {kind} ({tool}) zur Verfügung.",
    "no_kind": "{item}: Ich kenne kein Werkzeug, das das machen könnte.",
    "submitted": "{item}: {tool} hat die Anfrage angenommen.",
    "gen_failed": "{item}: {tool} ist fehlgeschlagen ({error}); ich wiederhole eine Generierung nicht von selbst.",
    "gen_unknown": "{item}: das Ergebnis von {tool} ist unbekannt.",
    "message_read": (
        "Ich habe deine Nachricht „{text}“ gelesen; als geskripteter Planer folge ich nur der Anfrage und der "
        "Checkliste."
    ),
    "item": "Schritt {position}",
    "items": "Schritte {positions} und {last}",
    "of": "von",
    "status_pending": "offen",
    "status_in_progress": "in Arbeit",
    "status_done": "erledigt",
    "status_skipped": "übersprungen",
    "needs_confirmation": " (braucht deine Bestätigung)",
    "revising": "du möchtest eine Änderung an fertiger Arbeit („{text}“): ich mache neue Versionen von {items}.",
    "goal_changed": (
        "du hast geändert, was diese Aufgabe liefern soll („{text}“). Die Anfrage lautet jetzt „{brief}“ "
        "(Zielrevision {revision}); ich plane neu und behalte, was schon fertig ist:"
    ),
    "goal_dropped": "Übersprungen: nicht mehr Teil des Ziels (Zielrevision {revision}).",
    "searching": "ich suche das Bild, von dem ich ausgehe: {query}.",
    "prose_needs_model": (
        "Ich kann {items} nicht schreiben: Ich bin Lomotes geskripteter Planer, kein Sprachmodell. Text zu "
        "schreiben braucht ein Modellprofil (ein OpenAI-kompatibles Modell: OpenAI, vLLM, Ollama, llama.cpp…), "
        "einzurichten mit `manage.py model_profile … --default` (README, „Agent runtime“). Bis dahin kann ich ein "
        "Gerüst-Dokument mit den Überschriften der Anfrage anlegen, das du ausfüllst."
    ),
    "still_scripted": "Dieser Schritt lief noch auf dem geskripteten Planer: Es ist noch kein Modellprofil gesetzt.",
    "opt_skeleton": "Ein Gerüst-Dokument anlegen",
    "opt_profile": "Ich richte ein Modellprofil ein",
    "await_profile": (
        "Richte das Modellprofil ein (README, „Agent runtime“: `manage.py model_profile … --default`) und bestätige "
        "dann hier: Der nächste Schritt läuft auf diesem Modell und schreibt {items}."
    ),
    "skeleton_requested": "du hast ein Gerüst-Dokument für {items} gewählt: ich bereite es vor.",
    "skeleton_made": (
        "Gerüst-Dokument {artifact} angelegt (nur Überschriften, kein Text geschrieben); der Text selbst braucht "
        "ein Modellprofil."
    ),
    "no_prose": "{item}: Text zu schreiben braucht ein Sprachmodell (ein Modellprofil), und ich bin ein "
    "geskripteter Planer.",
    "ack": "gern geschehen — ich habe nichts geändert.",
    "ack_open": "{done}/{total} Schritte sind erledigt; {items} noch offen.",
    "no_such_item": "diese Aufgabe hat kein(e) {refs} ({listing}), daher habe ich nichts geändert.",
    "not_made": "{items}: Es ist noch nichts gemacht, also gibt es dort noch nichts zu ändern.",
    "adding": "du möchtest mehr: ich füge {n} Schritt(e) hinzu:",
    "adding_new": "du möchtest neue Arbeit in dieser Aufgabe: ich füge sie hinzu:",
    "capped": "ich füge höchstens {max} Schritte auf einmal hinzu.",
    "ask_series": "Wie viele {noun} soll ich machen?",
    "ask_add": "Wie viele {noun} soll ich noch hinzufügen?",
    "type_number": "Gib die Zahl ein (höchstens {max}).",
    "opt_other": "Andere Zahl",
    "series_default": "du hast nicht gesagt, wie viele, daher mache ich {n} (meine Vorgabe für eine Serie).",
    "series_capped": "ich plane höchstens {max} Schritte auf einmal, daher mache ich {max}.",
    "reading_source": "bevor ich eine neue Version von {items} mache, lese ich, woraus es gemacht wurde.",
    "no_image_found": (
        "Ich habe kein Bild für „{query}“ in diesem Arbeitsbereich gefunden, daher kann ich {item} noch nicht davon "
        "ausgehend starten. Welches Bild soll ich nehmen?"
    ),
    "listing_images": (
        "ich habe kein Bild für „{query}“ gefunden; ich liste die neuesten Bilder des Arbeitsbereichs auf, um dich "
        "zu fragen."
    ),
    "no_images": (
        "Ich habe kein Bild für „{query}“ gefunden, und dieser Arbeitsbereich enthält kein Bild, von dem {item} "
        "ausgehen könnte. Füge das Foto dem Arbeitsbereich hinzu und antworte dann hier."
    ),
    "opt_none_of_these": "Keins davon",
    "source_chosen": "du hast Bild {artifact} als Ausgangspunkt für {item} gewählt.",
    "source_declined": "Für dieses Video wurde kein Ausgangsbild gewählt, daher wurde es weggelassen.",
    "source_declined_line": "es wurde kein Bild als Ausgangspunkt für {item} gewählt, daher lasse ich es weg.",
    "source_retry": "ich suche noch einmal das Ausgangsbild für {item}.",
    "no_image_prompt": "ich habe kein Bild für „{query}“ gefunden, daher geht {item} nur von seiner Beschreibung aus.",
    "one_result": "ich mache „{title}“ mit {tool}.",
    "one_revision": "ich mache eine neue Version von Element {artifact} mit {tool}: {change}.",
    "from_source": "ich gehe von deiner Datei „{title}“ (#{artifact}) aus.",
    "no_source_fits": "Keine deiner Dateien sieht aus wie die gemeinte, daher gehe ich nur von deinen Worten aus.",
    "source_evidence": "Ausgehend von der Datei „{title}“ der Person.",
    "which_source": "Mehrere deiner Dateien könnten die gemeinte sein: von welcher soll {items} ausgehen?",
    "source_alternatives": "Andere Dateien passen auch: {others}. Nenn eine, und ich gehe stattdessen von ihr aus.",
    "reading_guide": "ich lese den Leitfaden {names}, bevor ich mit dieser Arbeit beginne.",
    "reading_guides": "ich lese die Leitfäden {names}, bevor ich mit dieser Arbeit beginne.",
    "unsupported": (
        "das kann ich nicht machen: Ich mache Bilder (Plakate, Logos, Sticker, Icons, Social-Media-Posts, "
        "Story-Cover, Banner), kurze Videos und Animationen, 3D-Modelle und Dokumente — kein Audio, keine Musik, "
        "keine Websites oder Apps."
    ),
    "flow": (
        "das ist wiederkehrende Arbeit, ein Flow: Richte ihn unter Flows ein (er läuft jedes Mal von selbst). Ich "
        "kann jetzt ein Stück davon machen, wenn du es beschreibst."
    ),
    "ask_kind": "Welche Art von Arbeit soll ich für „{request}“ machen?",
    "ask_instead": "Soll ich stattdessen eines davon machen?",
}

ES: dict[str, str] = {
    "intro": "Planificador con guion de Lomote (no es un LLM):",
    "unknown_check": (
        "el resultado de {names} es desconocido, así que leo el estado de la tarea antes de hacer nada más."
    ),
    "unknown_blind": (
        "el resultado de {names} es desconocido y no puedo leer el estado de la tarea, así que no hago nada más."
    ),
    "planning": "divido la petición en {n} paso(s) y los guardo:",
    "plan_failed": "no pude guardar el plan ({error}). Pasos previstos:",
    "no_planning_tool": (
        "no puedo guardar una lista de pasos aquí (no hay herramienta update_checklist). Pasos previstos:"
    ),
    "ask_brief": (
        "Soy el planificador con guion de Lomote, no un LLM. ¿Qué debo hacer? Descríbelo en una frase (por "
        "ejemplo: una serie de 3 carteles retro)."
    ),
    "ask_question": (
        "Soy el planificador con guion de Lomote, no un LLM: no sé responder preguntas libres como «{question}». "
        "¿Qué debo hacer?"
    ),
    "opt_image": "Una imagen",
    "opt_video": "Un vídeo",
    "opt_document": "Un documento",
    "opt_keep": "Dejar el plan como está",
    "opt_new": "Lo describiré como una tarea nueva",
    "loading": "para avanzar con {items}, cargo las herramientas de {domains}.",
    "generating": "empiezo {items}.",
    "started_evidence": "Pedido con {tool} por el planificador con guion (paso {step}).",
    "done_evidence": "Elemento {artifact} producido por {tool}.",
    "attached_evidence": "El elemento {artifact} está asociado a este paso.",
    "recording_done": "{items}: el elemento existe, así que lo marco como hecho.",
    "plan_header": "Plan para «{title}» ({done}/{total} hechos):",
    "all_done": "Los {total} pasos están hechos.",
    "underway": "En curso (empezados antes, no repetidos): {items}.",
    "cannot": "Lo que no pude hacer:",
    "no_tool": "{item}: no tengo ninguna herramienta de {kind} ({tool}) disponible.",
    "no_kind": "{item}: no conozco ninguna herramienta que pueda hacerlo.",
    "submitted": "{item}: {tool} aceptó la petición.",
    "gen_failed": "{item}: {tool} falló ({error}); no repito una generación por mi cuenta.",
    "gen_unknown": "{item}: el resultado de {tool} es desconocido.",
    "message_read": ("Leí tu mensaje «{text}»; como planificador con guion solo sigo la petición y la lista de pasos."),
    "item": "el paso {position}",
    "items": "los pasos {positions} y {last}",
    "of": "de",
    "status_pending": "pendiente",
    "status_in_progress": "en curso",
    "status_done": "hecho",
    "status_skipped": "omitido",
    "needs_confirmation": " (necesita tu confirmación)",
    "revising": "pediste un cambio en un trabajo terminado («{text}»): haré versiones nuevas de {items}.",
    "goal_changed": (
        "cambiaste lo que debe entregar esta tarea («{text}»). La petición es ahora «{brief}» (revisión {revision} "
        "del objetivo); rehago el plan conservando lo ya hecho:"
    ),
    "goal_dropped": "Omitido: ya no forma parte del objetivo (revisión {revision} del objetivo).",
    "searching": "busco la imagen de partida: {query}.",
    "prose_needs_model": (
        "No puedo escribir {items}: soy el planificador con guion de Lomote, no un modelo de lenguaje. Escribir "
        "texto necesita un perfil de modelo (un modelo compatible con OpenAI: OpenAI, vLLM, Ollama, llama.cpp…), "
        "que se configura con `manage.py model_profile … --default` (README, «Agent runtime»). Mientras tanto puedo "
        "crear un documento esqueleto con los títulos de la petición para que lo completes."
    ),
    "still_scripted": "Este paso aún lo hizo el planificador con guion: todavía no hay ningún perfil de modelo.",
    "opt_skeleton": "Crear un documento esqueleto",
    "opt_profile": "Configuraré un perfil de modelo",
    "await_profile": (
        "Configura el perfil de modelo (README, «Agent runtime»: `manage.py model_profile … --default`) y luego "
        "confirma aquí: el siguiente paso usará ese modelo y escribirá {items}."
    ),
    "skeleton_requested": "elegiste un documento esqueleto para {items}: lo preparo.",
    "skeleton_made": (
        "Documento esqueleto {artifact} creado (solo títulos, sin texto escrito); el texto en sí necesita un perfil "
        "de modelo."
    ),
    "no_prose": "{item}: escribir texto necesita un modelo de lenguaje (un perfil de modelo), y yo soy un "
    "planificador con guion.",
    "ack": "de nada — no cambié nada.",
    "ack_open": "{done}/{total} pasos están hechos; {items} siguen abiertos.",
    "no_such_item": "esta tarea no tiene {refs} ({listing}), así que no cambié nada.",
    "not_made": "{items}: aún no hay nada hecho, así que todavía no hay nada que cambiar ahí.",
    "adding": "pediste más: añado {n} paso(s):",
    "adding_new": "pediste trabajo nuevo en esta tarea: lo añado:",
    "capped": "añado como máximo {max} pasos a la vez.",
    "ask_series": "¿Cuántos {noun} debo hacer?",
    "ask_add": "¿Cuántos {noun} más debo añadir?",
    "type_number": "Escribe el número (como máximo {max}).",
    "opt_other": "Otro número",
    "series_default": "no dijiste cuántos, así que hago {n} (mi número por defecto para una serie).",
    "series_capped": "planifico como máximo {max} pasos a la vez, así que hago {max}.",
    "reading_source": "antes de hacer una versión nueva de {items}, leo de qué se hizo.",
    "no_image_found": (
        "No encontré ninguna imagen para «{query}» en este espacio de trabajo, así que aún no puedo empezar {item} "
        "a partir de ella. ¿Qué imagen debo usar?"
    ),
    "listing_images": (
        "no encontré ninguna imagen para «{query}»; listo las imágenes recientes del espacio de trabajo para "
        "preguntarte."
    ),
    "no_images": (
        "No encontré ninguna imagen para «{query}» y este espacio de trabajo no tiene ninguna imagen de la que "
        "partir para {item}. Añade la foto al espacio de trabajo y luego responde aquí."
    ),
    "opt_none_of_these": "Ninguna de estas",
    "source_chosen": "elegiste la imagen {artifact} como punto de partida de {item}.",
    "source_declined": "No se eligió ninguna imagen de partida para este vídeo, así que se dejó fuera.",
    "source_declined_line": "no se eligió ninguna imagen de partida para {item}, así que lo dejo fuera.",
    "source_retry": "vuelvo a buscar la imagen de partida de {item}.",
    "no_image_prompt": "no encontré ninguna imagen para «{query}», así que {item} parte solo de su descripción.",
    "one_result": "hago «{title}» con {tool}.",
    "one_revision": "hago una versión nueva del elemento {artifact} con {tool}: {change}.",
    "from_source": "parto de tu archivo «{title}» (#{artifact}).",
    "no_source_fits": "Ninguno de tus archivos se parece al que dices, así que parto solo de tus palabras.",
    "source_evidence": "A partir del archivo «{title}» de la persona.",
    "which_source": "Varios de tus archivos podrían ser el que dices: ¿de cuál debe partir {items}?",
    "source_alternatives": "Otros archivos también encajan: {others}. Nombra uno y partiré de él.",
    "reading_guide": "leo la guía {names} antes de empezar este trabajo.",
    "reading_guides": "leo las guías {names} antes de empezar este trabajo.",
    "unsupported": (
        "no sé hacer eso: hago imágenes (carteles, logotipos, pegatinas, iconos, publicaciones para redes, "
        "portadas de historias, banners), vídeos cortos y animaciones, modelos 3D y documentos — no audio, música, "
        "sitios web ni aplicaciones."
    ),
    "flow": (
        "eso es un trabajo recurrente, un Flow: configúralo en Flows (se ejecuta solo cada vez). Puedo hacer una "
        "pieza ahora si la describes."
    ),
    "ask_kind": "¿Qué tipo de trabajo debo hacer para «{request}»?",
    "ask_instead": "¿Hago mejor una de estas cosas?",
}

PT: dict[str, str] = {
    "intro": "Planeador com guião do Lomote (não é um LLM):",
    "unknown_check": (
        "o resultado de {names} é desconhecido, por isso leio o estado da tarefa antes de fazer mais nada."
    ),
    "unknown_blind": (
        "o resultado de {names} é desconhecido e não consigo ler o estado da tarefa, por isso não faço mais nada."
    ),
    "planning": "divido o pedido em {n} passo(s) e guardo-os:",
    "plan_failed": "não consegui guardar o plano ({error}). Passos previstos:",
    "no_planning_tool": (
        "não consigo guardar uma lista de passos aqui (não há ferramenta update_checklist). Passos previstos:"
    ),
    "ask_brief": (
        "Sou o planeador com guião do Lomote, não um LLM. O que devo fazer? Descreva-o numa frase (por exemplo: "
        "uma série de 3 cartazes retro)."
    ),
    "ask_question": (
        "Sou o planeador com guião do Lomote, não um LLM: não sei responder a perguntas livres como «{question}». "
        "O que devo fazer?"
    ),
    "opt_image": "Uma imagem",
    "opt_video": "Um vídeo",
    "opt_document": "Um documento",
    "opt_keep": "Manter o plano como está",
    "opt_new": "Vou descrevê-lo como uma nova tarefa",
    "loading": "para avançar com {items}, carrego as ferramentas de {domains}.",
    "generating": "começo {items}.",
    "started_evidence": "Pedido com {tool} pelo planeador com guião (passo {step}).",
    "done_evidence": "Elemento {artifact} produzido por {tool}.",
    "attached_evidence": "O elemento {artifact} está associado a este passo.",
    "recording_done": "{items}: o elemento existe, por isso marco-o como feito.",
    "plan_header": "Plano para «{title}» ({done}/{total} feitos):",
    "all_done": "Os {total} passos estão feitos.",
    "underway": "Em curso (iniciados antes, não repetidos): {items}.",
    "cannot": "O que não consegui fazer:",
    "no_tool": "{item}: não tenho nenhuma ferramenta de {kind} ({tool}) disponível.",
    "no_kind": "{item}: não conheço nenhuma ferramenta capaz de o fazer.",
    "submitted": "{item}: {tool} aceitou o pedido.",
    "gen_failed": "{item}: {tool} falhou ({error}); não repito uma geração por iniciativa própria.",
    "gen_unknown": "{item}: o resultado de {tool} é desconhecido.",
    "message_read": ("Li a sua mensagem «{text}»; como planeador com guião, sigo apenas o pedido e a lista de passos."),
    "item": "o passo {position}",
    "items": "os passos {positions} e {last}",
    "of": "de",
    "status_pending": "por fazer",
    "status_in_progress": "em curso",
    "status_done": "feito",
    "status_skipped": "ignorado",
    "needs_confirmation": " (precisa da sua confirmação)",
    "revising": "pediu uma alteração a trabalho terminado («{text}»): vou fazer novas versões de {items}.",
    "goal_changed": (
        "mudou o que esta tarefa deve entregar («{text}»). O pedido é agora «{brief}» (revisão {revision} do "
        "objetivo); refaço o plano mantendo o que já está feito:"
    ),
    "goal_dropped": "Ignorado: já não faz parte do objetivo (revisão {revision} do objetivo).",
    "searching": "procuro a imagem de partida: {query}.",
    "prose_needs_model": (
        "Não consigo escrever {items}: sou o planeador com guião do Lomote, não um modelo de linguagem. Escrever "
        "texto precisa de um perfil de modelo (um modelo compatível com OpenAI: OpenAI, vLLM, Ollama, llama.cpp…), "
        "configurado com `manage.py model_profile … --default` (README, «Agent runtime»). Entretanto posso criar um "
        "documento esqueleto com os títulos do pedido, para preencher."
    ),
    "still_scripted": "Este passo ainda correu no planeador com guião: ainda não há nenhum perfil de modelo.",
    "opt_skeleton": "Criar um documento esqueleto",
    "opt_profile": "Vou configurar um perfil de modelo",
    "await_profile": (
        "Configure o perfil de modelo (README, «Agent runtime»: `manage.py model_profile … --default`) e depois "
        "confirme aqui: o passo seguinte usa esse modelo e escreve {items}."
    ),
    "skeleton_requested": "escolheu um documento esqueleto para {items}: estou a prepará-lo.",
    "skeleton_made": (
        "Documento esqueleto {artifact} criado (só títulos, nenhum texto escrito); o texto em si precisa de um "
        "perfil de modelo."
    ),
    "no_prose": "{item}: escrever texto precisa de um modelo de linguagem (um perfil de modelo), e eu sou um "
    "planeador com guião.",
    "ack": "de nada — não mudei nada.",
    "ack_open": "{done}/{total} passos estão feitos; {items} continuam em aberto.",
    "no_such_item": "esta tarefa não tem {refs} ({listing}), por isso não mudei nada.",
    "not_made": "{items}: ainda não há nada feito, por isso ainda não há nada a mudar aí.",
    "adding": "pediu mais: acrescento {n} passo(s):",
    "adding_new": "pediu trabalho novo nesta tarefa: acrescento-o:",
    "capped": "acrescento no máximo {max} passos de cada vez.",
    "ask_series": "Quantos {noun} devo fazer?",
    "ask_add": "Quantos {noun} a mais devo acrescentar?",
    "type_number": "Escreva o número (no máximo {max}).",
    "opt_other": "Outro número",
    "series_default": "não disse quantos, por isso faço {n} (o meu número por omissão para uma série).",
    "series_capped": "planeio no máximo {max} passos de cada vez, por isso faço {max}.",
    "reading_source": "antes de fazer uma nova versão de {items}, leio a partir de que foi feito.",
    "no_image_found": (
        "Não encontrei nenhuma imagem para «{query}» neste espaço de trabalho, por isso ainda não posso começar "
        "{item} a partir dela. Que imagem devo usar?"
    ),
    "listing_images": (
        "não encontrei nenhuma imagem para «{query}»; listo as imagens recentes do espaço de trabalho para lhe "
        "perguntar."
    ),
    "no_images": (
        "Não encontrei nenhuma imagem para «{query}» e este espaço de trabalho não tem nenhuma imagem de onde "
        "partir para {item}. Adicione a fotografia ao espaço de trabalho e depois responda aqui."
    ),
    "opt_none_of_these": "Nenhuma destas",
    "source_chosen": "escolheu a imagem {artifact} como ponto de partida de {item}.",
    "source_declined": "Não foi escolhida nenhuma imagem de partida para este vídeo, por isso ficou de fora.",
    "source_declined_line": "não foi escolhida nenhuma imagem de partida para {item}, por isso deixo-o de fora.",
    "source_retry": "volto a procurar a imagem de partida de {item}.",
    "no_image_prompt": "não encontrei nenhuma imagem para «{query}», por isso {item} parte só da sua descrição.",
    "one_result": "faço «{title}» com {tool}.",
    "one_revision": "faço uma nova versão do elemento {artifact} com {tool}: {change}.",
    "from_source": "parto do seu ficheiro «{title}» (#{artifact}).",
    "no_source_fits": "Nenhum dos seus ficheiros se parece com o que refere, por isso parto só das suas palavras.",
    "source_evidence": "A partir do ficheiro «{title}» da pessoa.",
    "which_source": "Vários dos seus ficheiros podem ser o que refere: de qual deve partir {items}?",
    "source_alternatives": "Outros ficheiros também servem: {others}. Indique um e parto dele.",
    "reading_guide": "leio o guia {names} antes de começar este trabalho.",
    "reading_guides": "leio os guias {names} antes de começar este trabalho.",
    "unsupported": (
        "não sei fazer isso: faço imagens (cartazes, logótipos, autocolantes, ícones, publicações para redes, "
        "capas de stories, banners), vídeos curtos e animações, modelos 3D e documentos — não áudio, música, sites "
        "nem aplicações."
    ),
    "flow": (
        "isso é trabalho recorrente, um Flow: configure-o em Flows (corre sozinho de cada vez). Posso fazer uma "
        "peça agora se a descrever."
    ),
    "ask_kind": "Que tipo de trabalho devo fazer para «{request}»?",
    "ask_instead": "Devo antes fazer uma destas coisas?",
}

# A kind's name for a title when no noun of the request names it, and in "no {kind} tool", per language.
KIND_LABELS = {
    "de": {"image": "Bild", "video": "Video", "3d": "3D-Modell", "document": "Dokument", "text": "Text"},
    "es": {"image": "imagen", "video": "vídeo", "3d": "modelo 3D", "document": "documento", "text": "texto"},
    "pt": {"image": "imagem", "video": "vídeo", "3d": "modelo 3D", "document": "documento", "text": "texto"},
}
KIND_NAMES = {
    "de": {"image": "Bilder", "video": "Videos", "3d": "3D", "document": "Dokumente", "text": "Text"},
    "es": {"image": "imagen", "video": "vídeo", "3d": "3D", "document": "documento", "text": "texto"},
    "pt": {"image": "imagem", "video": "vídeo", "3d": "3D", "document": "documento", "text": "texto"},
}
DOMAIN_NAMES = {
    "de": {
        "image": "Bilder",
        "video": "Video",
        "3d": "3D",
        "documents": "Dokumente",
        "flows": "Flows",
        "assets": "Medien",
    },
    "es": {
        "image": "imagen",
        "video": "vídeo",
        "3d": "3D",
        "documents": "documento",
        "flows": "Flow",
        "assets": "recursos",
    },
    "pt": {
        "image": "imagem",
        "video": "vídeo",
        "3d": "3D",
        "documents": "documento",
        "flows": "Flow",
        "assets": "recursos",
    },
}
