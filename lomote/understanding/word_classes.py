"""Word classes per language (en, fr, de, es, pt), language data of the understanding layer: read by the
scripted model's goal-change reader (agents/scripted/goal_change.py: a goal change's cues and deliverables; still
read by words there, the last keyword reader, README "Understanding by meaning") and memory/search.py (stop words).

The subject of a request is no longer read with them: the understanding layer's subject tagger reads it
(lomote/understanding/subject.py). A word that is in no class is a content word. Lists are lower case and hold
the inflections people type (plurals, imperatives, polite forms).

Classes:
- determiner: articles, possessives, demonstratives — skipped between a preposition and its noun phrase;
- function: pronouns, auxiliaries and modals, politeness, conjunctions, filler adverbs, "something";
- preposition: words that introduce what a kind of work is for or about ("for", "pour", "für", "para");
- connector: words that join the parts of one name ("festival *de* jazz", "Tom *and* Jerry");
- verb: making, changing and using verbs, imperative and infinitive ("create", "crée", "erstelle", "haz");
- count: numbers written out, quantities, series words, ordinals, durations;
- kind: nouns for kinds of work (poster, logo, video…), grouped in KIND_GROUPS;
- style: how it should look (retro, minimal, colourful, bigger…) — rendered as style, never as text;
- time: when the source was made ("yesterday's", "d'hier", "gestrige");
- naming: words after which comes the text itself ("called", "intitulée", "namens", "llamado").

Beside the classes: UNITS (words that measure after a number: "3 pm", "20 cm"), TIME_PHRASES (period words
that are a time reference next to a relative word: "the other day", "la semaine dernière"), MEDIUM_KINDS
(kinds that qualify another kind: "a *video* teaser", "une figurine *3d*") and CONJUNCTIONS (connectors that
join two things rather than a thing and what it is of).
"""

import unicodedata

CLASSES = ("determiner", "function", "preposition", "connector", "verb", "count", "kind", "style", "time", "naming")

_EN = {
    "determiner": """a an the this that these those my our your his her their its whose each every another both
        either neither no""",
    "function": """it it's i me mine myself we us ours ourselves you yours yourself yourselves he him she hers
        they them theirs one ones someone somebody something anything everything thing things stuff and or but
        nor so then also too again just now still even really actually maybe perhaps kindly quickly quick
        please pls plz thanks thank thx ty hi hello hey dear hiya yo ok okay alright sure can could would will
        shall should may might must do does did don't doesn't didn't can't cannot won't wouldn't couldn't
        shouldn't need needs needed want wants wanted wanna gonna going go like love i'd i'm i'll i've we'd
        we're we'll we've you'd you're you'll you've let's lets help mind able possible be is are am was were
        been being get got gets have has had having try trying looking wondering wonder if whether what
        what's which who whom how why when where while whatever any all same such own yes not there here
        that's there's here's as than ready sometime soon asap right greatly appreciate appreciated event
        events occasion revision revisions request requested""",
    "preposition": """for about on with without featuring showing depicting presenting representing illustrating
        announcing advertising promoting celebrating inviting into onto in at by from to over under around
        across through after before during within between against toward towards per via regarding
        concerning re based inspired upon using including containing out up off""",
    "connector": "of and & 'n'",
    "verb": """create creates created creating make makes made making design designed designing draw draws
        drawing drew render generate generates generated generating produce producing paint painting build
        building craft crafting prepare preparing give giving turn turning transform transforming convert
        converting write writing compose composing sketch sketching illustrate illustrating animate animating
        come whip mock put show print hang use share send add include place change redo update tweak adjust
        modify edit fix improve rework refine imagine invent brainstorm develop deliver provide bring move moved
        shift""",
    "count": """zero two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
        sixteen seventeen eighteen nineteen twenty thirty forty fifty hundred dozen dozens couple pair few
        several many multiple various some lots lot bunch handful series set sets batch pack collection
        variants variant variations variation versions version options option alternatives copies copy
        first second third fourth fifth sixth seventh eighth ninth tenth single double triple half seconds
        sec secs minute minutes min mins hour hours frame frames px pixels items item piece pieces""",
    "kind:logo": """logo logos logotype logotypes logomark logomarks wordmark wordmarks brandmark brandmarks
        emblem emblems monogram monograms insignia badge badges crest crests""",
    "kind:image": """poster posters image images picture pictures pic pics photo photos photograph photographs
        illustration illustrations drawing drawings painting paintings artwork artworks flyer flyers leaflet
        leaflets brochure brochures banner banners visual visuals graphic graphics infographic infographics
        icon icons cover covers wallpaper wallpapers background backgrounds sticker stickers postcard
        postcards card cards invitation invitations invite thumbnail thumbnails portrait portraits mockup
        mockups mock-up label labels mascot mascots packaging print prints placard sign signs billboard
        billboards ad ads advert adverts advertisement advertisements meme memes rendering renderings""",
    "kind:video": """video videos clip clips animation animations gif gifs film films movie movies reel reels
        teaser teasers trailer trailers loop loops slideshow slideshows""",
    "kind:3d": "model models 3d mesh meshes asset assets sculpture sculptures figurine figurines statuette",
    "kind:document": """document documents doc docs text texts article articles post posts blog description
        descriptions story stories essay essays letter letters email emails e-mail newsletter newsletters
        report reports summary summaries script scripts outline outlines slogan slogans tagline taglines
        caption captions headline headlines storyboard""",
    "kind:work": "layout layouts composition compositions concept concepts draft drafts mockup",
    "style": """retro vintage modern minimal minimalist minimalistic clean simple elegant luxury luxurious
        classy chic sleek bold playful fun funny cute kawaii colorful colourful vibrant vivid bright brighter
        dark darker light lighter soft softer pastel neon grunge futuristic abstract geometric flat hand-drawn
        handdrawn watercolor watercolour realistic photorealistic cartoon cartoonish cinematic dramatic moody
        warm warmer cool cooler cold colder hot big bigger small smaller large larger tiny huge little short
        long new old-school mid-century groovy psychedelic swiss bauhaus art-deco monochrome stylish trendy
        professional corporate fancy festive beautiful pretty nice great awesome amazing stunning striking
        eye-catching catchy gorgeous lovely unique original creative basic square vertical horizontal
        landscape round circular high-res hd 4k widescreen animated looping seamless matte glossy glitchy
        seventies eighties nineties sixties more less much bit slightly somewhat rather quite very style
        styled themed theme vibe vibes feel aesthetic color colors colour colours palette tones font fonts
        typography look top bottom middle left right centre center centered centred corner side""",
    "time": """yesterday yesterday's today today's tomorrow tomorrow's tonight tonight's last last's previous
        recent recently earlier latest ago current upcoming next""",
    "naming": """called named titled entitled saying says reading reads labelled labeled text title headline
        slogan tagline caption name wording""",
}

_FR = {
    "determiner": """le la les l' un une des ce cet cette ces mon ma mes ton ta tes son sa ses notre nos votre
        vos leur leurs chaque aucun aucune tout toute tous toutes""",
    "function": """je j' tu il elle on nous vous ils elles me m' te t' se s' lui y moi toi soi eux ou mais
        donc ni car que qu' qui quoi dont où ne n' pas si comme est-ce ce c' ça cela ceci voici voilà oui
        non svp stp plaît plait merci bonjour bonsoir salut coucou hello cher chère peux peut pouvez pourrais
        pourrait pourriez pourrions pourrais-tu veux veut voulez voudrais voudrait voudriez voudrions aimerais
        aimerait aimerions souhaite souhaiterais souhaitons besoin faut faudrait dois doit devez devrais est
        es sont suis sommes êtes serait serais sera soit ai as a avons avez ont aurais aurait vais va allons
        allez aller possible aussi encore juste maintenant vite rapidement peut-être vraiment bien chose truc
        également ensuite puis alors avoir être quelque événement évènement occasion""",
    "preposition": """pour sur avec sans dans en par chez sous vers entre contre après avant pendant depuis
        selon autour montrant représentant présentant annonçant célébrant illustrant inspiré inspirée basé
        basée propos concernant""",
    "connector": "de d' du des à au aux et &",
    "verb": """crée créer créez crées créé créée fais faire faites fait fabrique fabriquer dessine dessiner
        dessinez génère générer générez conçois concevoir concevez réalise réaliser réalisez prépare préparer
        préparez produis produire produisez transforme transformer transformez convertis convertir
        convertissez écris écrire écrivez rédige rédiger rédigez imagine imaginer imaginez propose proposer
        proposez compose composer anime animer illustre illustrer peins peindre montre montrer donne donner
        mets mettre ajoute ajouter change changer modifie modifier refais refaire imprimer imprime utiliser
        utilise envoie envoyer partager design designer déplace déplacer bouge bouger""",
    "count": """deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize vingt
        trente cent douzaine paire quelques plusieurs divers diverses série séries ensemble lot jeu variantes
        variante versions version déclinaisons déclinaison options option exemplaires exemplaire premier
        première deuxième second seconde troisième quatrième cinquième secondes minutes minute heure heures""",
    "kind:logo": """logo logos logotype logotypes emblème emblèmes monogramme monogrammes insigne insignes
        badge badges écusson écussons blason sigle""",
    "kind:image": """affiche affiches poster posters image images photo photos photographie photographies
        illustration illustrations dessin dessins peinture peintures visuel visuels flyer flyers prospectus
        tract tracts dépliant dépliants brochure brochures bannière bannières banderole icône icônes
        couverture couvertures pochette pochettes fond écran carte cartes invitation invitations miniature
        miniatures portrait portraits autocollant autocollants étiquette étiquettes mascotte mascottes
        emballage maquette maquettes""",
    "kind:video": """vidéo vidéos clip clips animation animations gif gifs film films court-métrage
        bande-annonce teaser boucle""",
    "kind:3d": "modèle modèles 3d objet objets sculpture figurine",
    "kind:document": """document documents texte textes article articles description descriptions lettre lettres
        courriel e-mail email newsletter rapport résumé script scénario slogan slogans accroche publication
        post""",
    "style": """rétro vintage moderne minimaliste minimal épuré épurée simple élégant élégante élégants chic
        luxueux luxe audacieux ludique mignon mignonne coloré colorée colorés colorées vif vive vifs lumineux
        lumineuse sombre clair claire doux douce pastel néon futuriste abstrait abstraite géométrique plat
        aquarelle réaliste cinématographique chaleureux chaud chaude chauds froid froide grand grande grands
        grandes petit petite petits petites énorme court courte long longue nouveau nouvelle nouveaux
        nouvelles beau belle jolie joli magnifique superbe original originale créatif créative professionnel
        professionnelle style styles façon ambiance couleurs couleur tons palette animé animée animés carré
        carrée vertical verticale horizontal horizontale plus moins très trop peu légèrement assez années haut
        bas gauche droite centre milieu coin""",
    "time": """hier avant-hier aujourd'hui demain dernier dernière derniers dernières précédent précédente récent
        récente récemment prochain prochaine actuel actuelle""",
    "naming": "intitulé intitulée intitulés appelé appelée appelés nommé nommée disant dit texte titre slogan nom",
}

_DE = {
    "determiner": """die das den dem ein eine einen einem einer eines kein keine mein meine meinen meinem meiner
        meines dein deine deinen deinem deiner unser unsere unseren unserem unserer euer eure ihre ihren
        ihrem ihrer sein seine seinen seinem seiner dieser diese dieses diesen diesem jede jeder jedes""",
    "function": """ich du er sie es wir ihr mich mir dich dir uns euch sich man oder aber denn doch sondern
        dass ob wenn wie was wer wo warum welche welcher welches bitte danke hallo hi hey liebe lieber kannst
        kann können könntest könnte könnten würde würdest würden wäre will willst wollen möchte möchtest
        möchten mag magst brauche brauchst brauchen benötige hätte hätten gern gerne mal einmal nochmal noch
        auch schon jetzt schnell vielleicht eben ja nein nicht bin bist ist sind war waren habe hast hat
        haben werde wirst wird werden etwas sowie so sei veranstaltung anlass""",
    "preposition": """für über mit ohne zu zum zur in im ins an am auf aus bei nach vor hinter unter zwischen
        gegen durch um zeigt zeigend darauf""",
    "connector": "von vom der des und &",
    "verb": """mach mache machen macht erstelle erstellen erstellt erstell entwirf entwerfen entwerfe gestalte
        gestalten gestaltest zeichne zeichnen zeichnest generiere generieren erzeuge erzeugen verwandle
        verwandeln wandle wandeln schreib schreibe schreiben designe designen design baue bauen bau kreiere
        kreieren produziere produzieren male malen illustriere illustrieren animiere animieren denk denke
        ausdenken gib geben zeig zeige zeigen lass lasst lassen setze setzen füge hinzufügen ändere ändern
        drucken nutzen verwenden verschiebe verschieben""",
    "count": """eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf zwanzig hundert dutzend paar
        einige mehrere verschiedene serie reihe satz set varianten variante versionen version optionen
        option erste ersten zweite zweiten dritte dritten sekunden sekunde minuten minute stück""",
    "kind:logo": """logo logos logotyp logotype emblem embleme signet signets wortmarke bildmarke markenzeichen
        abzeichen wappen monogramm""",
    "kind:image": """plakat plakate poster bild bilder foto fotos illustration illustrationen zeichnung
        zeichnungen gemälde grafik grafiken flyer flugblatt banner symbol icon icons cover titelbild
        hintergrund hintergrundbild karte karten postkarte postkarten einladung einladungen aufkleber sticker
        etikett etiketten maskottchen verpackung mockup""",
    "kind:video": "video videos clip clips animation animationen gif film filme kurzfilm trailer",
    "kind:3d": "modell modelle 3d objekt objekte skulptur figur",
    "kind:document": """dokument dokumente text texte artikel beschreibung beschreibungen brief e-mail email
        newsletter bericht zusammenfassung skript slogan slogans beitrag""",
    "style": """retro vintage modern moderne modernes minimalistisch minimalistische minimalistisches minimal
        schlicht schlichte elegant elegante elegantes edel verspielt verspielte bunt bunte buntes farbenfroh
        farbenfrohe knallig hell helle dunkel dunkle sanft pastell neon futuristisch abstrakt geometrisch
        flach realistisch warm warme wärmer kühl kühle kühler kalt groß große großes größer klein kleine
        kleines kleiner kurz kurze kurzes lang neu neue neuen neues schön schöne schönes hübsch toll cool stil
        look farben farbe töne animiert animierte animiertes quadratisch hochformat querformat mehr weniger
        sehr bisschen leicht ganz ziemlich oben unten links rechts mitte""",
    "time": """gestern gestrige gestrigen gestriges heute heutige heutigen morgen morgige letzte letzten letzter
        letztes vorletzte vorletzten vorletzter vorletztes vorherige vorherigen vorige vorigen voriger voriges
        vergangene vergangenen vergangener vergangenes neulich vorgestern aktuell aktuelle nächste nächsten vorhin""",
    "naming": "namens genannt heißt titel überschrift schriftzug text aufschrift slogan",
}

_ES = {
    "determiner": """el la los las lo un una unos unas mi mis tu tus su sus nuestro nuestra nuestros nuestras
        vuestro vuestra este esta estos estas ese esa esos esas aquel aquella cada algún alguna""",
    "function": """yo tú usted ustedes él ella nosotros nosotras ellos ellas me te se le les nos os o u pero
        ni que qué quien quién cual cuál como cómo donde dónde cuando si no sí porque favor gracias hola
        buenas buenos días oye puedes puede podés podrías podría podrían pueden podemos quiero quieres quiere
        queremos quisiera quisiéramos gustaría gustaria encantaría necesito necesita necesitamos necesitaría
        es son está están sea ser estar hay he has ha hemos han tengo tiene tenemos voy vas va vamos también
        ya ahora rápido quizás tal vez algo cosa porfa porfavor otra otro poder posible evento ocasión""",
    "preposition": """para por sobre con sin en a al hacia desde entre contra tras durante según mostrando
        presentando anunciando celebrando representando ilustrando promocionando inspirado inspirada basado
        basada acerca""",
    "connector": "de del y e &",
    "verb": """crea crear créame crees haz hacer hazme hace hagas haga diseña diseñar diseñes diseñe diséñame
        dibuja dibujar dibujes dibuje dibújame genera generar generes genere produce producir prepara
        preparar realiza realizar elabora elaborar convierte convertir conviertas transforma transformar
        transformes escribe escribir escribas redacta redactar pinta pintar ilustra ilustrar anima animar
        inventa muestra mostrar dame dar pon poner añade añadir cambia cambiar modifica modificar rehaz
        imprimir usar mueve mover""",
    "count": """uno dos tres cuatro cinco seis siete ocho nueve diez once doce veinte cien docena par pareja
        varios varias algunos algunas pocos muchos diversos serie series conjunto juego set lote variantes
        variante versiones versión opciones opción copias primer primero primera segundo segunda tercero
        tercera segundos minutos minuto""",
    "kind:logo": "logo logos logotipo logotipos isotipo imagotipo emblema emblemas insignia monograma escudo",
    "kind:image": """cartel carteles póster pósters poster posters afiche afiches imagen imágenes foto fotos
        fotografía fotografías ilustración ilustraciones dibujo dibujos pintura pinturas cuadro visual flyer
        flyers folleto folletos volante octavilla pancarta banner banners icono iconos ícono portada portadas
        fondo pantalla tarjeta tarjetas postal postales invitación invitaciones miniatura retrato pegatina
        pegatinas etiqueta etiquetas mascota empaque maqueta""",
    "kind:video": """vídeo vídeos video videos clip clips animación animaciones gif película películas corto
        cortometraje tráiler""",
    "kind:3d": "modelo modelos 3d objeto objetos escultura figura",
    "kind:document": """documento documentos texto textos artículo artículos descripción descripciones carta
        cartas correo email boletín informe resumen guion guión eslogan lema publicación post entrada""",
    "style": """retro vintage moderno moderna minimalista minimal sencillo sencilla simple elegante lujoso chic
        llamativo llamativa divertido divertida lindo linda bonito bonita colorido colorida coloridos vibrante
        brillante oscuro oscura claro clara suave pastel neón neon futurista abstracto geométrico plano
        acuarela realista cálido cálida cálidos frío fría fresco grande grandes pequeño pequeña pequeños corto
        corta largo nuevo nueva nuevos nuevas hermoso hermosa original creativo creativa profesional estilo
        colores color tonos paleta animado animada cuadrado cuadrada vertical horizontal más menos muy poco
        bastante años arriba abajo izquierda derecha centro""",
    "time": """ayer anteayer hoy mañana anoche último última últimos anterior anteriores reciente recientes próximo
        próxima actual""",
    "naming": "llamado llamada titulado titulada diga dice diciendo texto título eslogan lema nombre",
}

_PT = {
    "determiner": """o a os as um uma uns umas meu minha meus minhas teu tua teus tuas seu sua seus suas nosso
        nossa nossos nossas este esta estes estas esse essa esses essas aquele aquela cada algum alguma""",
    "function": """eu tu você vocês ele ela nós eles elas me te se lhe lhes vos ou mas nem que quem qual como
        onde quando não sim porque favor obrigado obrigada olá oi bom boa dia tarde pode podes poderia
        poderias podia podem podemos posso quero queres quer queremos queria gostaria gostaríamos adoraria
        preciso precisa precisamos precisaria é são está estão seja ser estar há tenho tem temos vou vai
        vamos também já agora rápido talvez algo coisa aí evento ocasião""",
    "preposition": """para pra por sobre com sem em no na nos nas num numa ao aos à às até desde entre contra durante
        mostrando apresentando anunciando celebrando representando ilustrando divulgando promovendo
        inspirado inspirada baseado baseada acerca pelo pela""",
    "connector": "de do da dos das e &",
    "verb": """cria crie criar crias faça faz fazer façam desenha desenhe desenhar gera gere gerar produz
        produza produzir prepara prepare preparar realiza realize realizar elabora elabore elaborar transforma
        transforme transformar converte converta converter escreve escreva escrever redige redija pinta pinte
        ilustra ilustre anima anime projeta projete projetar monta monte mostra mostre dá dê põe ponha coloca
        coloque adiciona muda mude modifica move mova mover""",
    "count": """dois duas três quatro cinco seis sete oito nove dez onze doze vinte cem dúzia par vários
        várias alguns algumas poucos muitos diversos série séries conjunto jogo kit variantes variante
        versões versão opções opção cópias primeiro primeira segundo segunda terceiro terceira segundos
        minutos minuto""",
    "kind:logo": "logo logos logotipo logotipos emblema emblemas insígnia monograma brasão",
    "kind:image": """cartaz cartazes pôster pôsteres poster posters imagem imagens foto fotos fotografia
        fotografias ilustração ilustrações desenho desenhos pintura pinturas quadro visual flyer flyers
        folheto folhetos panfleto panfletos banner banners faixa ícone ícones capa capas fundo papel parede
        cartão cartões postal convite convites miniatura retrato adesivo adesivos etiqueta etiquetas rótulo
        mascote embalagem maquete mockup""",
    "kind:video": "vídeo vídeos video videos clipe clipes clip animação animações gif filme filmes curta trailer",
    "kind:3d": "modelo modelos 3d objeto objetos escultura figura",
    "kind:document": """documento documentos texto textos artigo artigos descrição descrições carta cartas email
        e-mail boletim relatório resumo roteiro slogan publicação post""",
    "style": """retrô retro vintage moderno moderna minimalista minimal simples elegante luxuoso chique
        divertido divertida fofo fofa bonito bonita colorido colorida coloridos vibrante brilhante escuro
        escura claro clara suave pastel néon neon futurista abstrato geométrico plano aquarela realista quente
        quentes frio fria grande grandes pequeno pequena curto curta longo novo nova novos novas lindo linda
        original criativo criativa profissional estilo cores cor tons paleta animado animada quadrado
        quadrada vertical horizontal mais menos muito pouco anos cima baixo esquerda direita centro""",
    "time": """ontem anteontem hoje amanhã último última últimos anterior anteriores recente recentes próximo próxima
        atual""",
    "naming": "chamado chamada intitulado intitulada diga diz dizendo texto título slogan nome",
}

LEXICONS: dict[str, dict[str, str]] = {"en": _EN, "fr": _FR, "de": _DE, "es": _ES, "pt": _PT}

# Kinds written in two words, whose words alone mean something else ("a brand mark", not "brand" + "mark").
KIND_PHRASES: dict[str, dict[tuple[str, str], str]] = {
    "en": {("brand", "mark"): "logo", ("word", "mark"): "logo", ("logo", "mark"): "logo", ("blog", "post"): "document"},
    "fr": {("court", "métrage"): "video"},
    "de": {},
    "es": {},
    "pt": {},
}
LANGUAGES = tuple(LEXICONS)

# After a number these measure rather than name: "at 3 pm", "20 cm", "um 20 Uhr", "a las 9 h", "50 x 70".
UNITS = frozenset(
    """am pm a.m. p.m. h hr hrs hour hours o'clock uhr std heure heures hora horas min mins minute minutes minuten
    minuto minutos s sec secs second seconds seconde secondes sekunde sekunden segundo segundos ms fps mm cm m km
    mi ft inch inches foot feet yd kg g mg lb lbs oz l ml cl mb gb kb tb px pt pts dpi ppi p k x percent pourcent
    prozent""".split()
)

# Relative time phrases, per language: (period words, relative words before a period, relative words right
# after one). A period word is a time reference, not a subject, when a relative word (or a "time" class word)
# comes before it, articles and counts between ("the other day", "the last two weeks", "vor zwei Tagen",
# "l'autre jour"), or right after it ("la semaine dernière", "el mes pasado", "two days ago"). Relative words
# may be several words ("il y a").
_TIME_PHRASES = {
    "en": (
        """day days week weeks weekend weekends month months year years morning mornings afternoon afternoons
        evening evenings night nights time monday tuesday wednesday thursday friday saturday sunday spring
        summer autumn fall winter""",
        "other this that past previous last next coming following same",
        "ago earlier back before",
    ),
    "fr": (
        """jour jours journée semaine semaines mois an ans année années matin matinée après-midi soir soirée
        nuit week-end weekend fois lundi mardi mercredi jeudi vendredi samedi dimanche printemps été automne
        hiver""",
        """autre autres ce cet cette dernier dernière derniers dernières précédent précédente prochain prochaine
        même il_y_a""",
        """dernier dernière derniers dernières passé passée passés passées précédent précédente précédents
        précédentes prochain prochaine prochains prochaines""",
    ),
    "de": (
        """tag tage tagen tages woche wochen monat monate monaten monats jahr jahre jahren jahres morgen
        vormittag nachmittag abend abends nacht wochenende mal montag dienstag mittwoch donnerstag freitag
        samstag sonntag frühling frühjahr sommer herbst winter""",
        """letzte letzten letzter letztes vorige vorigen voriger voriges vergangene vergangenen vergangener
        vergangenes diese dieser diesen dieses nächste nächsten nächster nächstes kommende kommenden kommender
        kommendes andere anderen anderer vor""",
        "zuvor davor vorher",
    ),
    "es": (
        """día días semana semanas mes meses año años mañana tarde tardes noche noches finde fin vez veces lunes
        martes miércoles jueves viernes sábado domingo primavera verano otoño invierno""",
        """otro otra otros otras último última últimos últimas pasado pasada este esta estos estas ese esa aquel
        aquella próximo próxima mismo misma hace""",
        "pasado pasada pasados pasadas anterior anteriores próximo próxima atrás",
    ),
    "pt": (
        """dia dias semana semanas mês meses ano anos manhã tarde tardes noite noites fim vez vezes sábado
        domingo primavera verão outono inverno""",
        """outro outra outros outras último última últimos últimas passado passada este esta estes estas esse
        essa aquele aquela próximo próxima mesmo mesma há""",
        "passado passada passados passadas anterior anteriores próximo próxima atrás",
    ),
}


def _phrase_words(words: str) -> frozenset[str]:
    return frozenset(word.replace("_", " ") for word in words.split())


TIME_PHRASES: dict[str, tuple[frozenset[str], frozenset[str], frozenset[str]]] = {
    lang: (_phrase_words(periods), _phrase_words(before), _phrase_words(after))
    for lang, (periods, before, after) in _TIME_PHRASES.items()
}

# Kinds that also qualify another kind, as an adjective would: "a 3d mascot figurine", "a video teaser",
# "une figurine 3d", "un teaser vidéo". Such a word then says how the work is made, not what it shows.
MEDIUM_KINDS: dict[str, frozenset[str]] = {
    "en": frozenset("3d video photo gif film movie animation".split()),
    "fr": frozenset("3d vidéo photo gif film animation".split()),
    "de": frozenset("3d video foto gif film animation".split()),
    "es": frozenset("3d vídeo video foto gif película animación".split()),
    "pt": frozenset("3d vídeo video foto gif filme animação".split()),
}

# Connectors joining two things ("a logo and a poster"), not a thing and what it is of ("a video of the logo").
CONJUNCTIONS = frozenset("and & 'n' et und y e".split())


def _unaccented(word: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", word) if not unicodedata.combining(ch))


# Kind group → its nouns in every language, lower case (with and without accents).
KIND_GROUPS: dict[str, frozenset[str]] = {}
for _lexicon in LEXICONS.values():
    for _name, _words in _lexicon.items():
        if _name.startswith("kind:"):
            _group = _name.split(":", 1)[1]
            _forms = {form for word in _words.split() for form in (word, _unaccented(word))}
            KIND_GROUPS[_group] = KIND_GROUPS.get(_group, frozenset()) | frozenset(_forms)
