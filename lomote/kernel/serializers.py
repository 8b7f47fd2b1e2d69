from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """Input serializer that refuses unknown fields instead of silently dropping them.

    It also refuses JSON numbers where a string is expected (DRF's CharField turns 123 into "123"): the
    JSON type is part of the contract, and a client sending a number has a bug we should report.
    """

    def to_internal_value(self, data):
        if isinstance(data, dict):
            writable = {name for name, field in self.fields.items() if not field.read_only}
            unknown = sorted(set(data) - writable)
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
            not_strings = {
                name: [field.error_messages["invalid"]]
                for name, field in self.fields.items()
                if isinstance(field, serializers.CharField) and isinstance(data.get(name), int | float)
            }
            if not_strings:
                raise serializers.ValidationError(not_strings)
        return super().to_internal_value(data)


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Machine-readable error code, e.g. `not_found`, `last_owner`.")
    message = serializers.CharField(help_text="Human-readable explanation.")
    details = serializers.DictField(help_text="Structured context, e.g. per-field errors under `fields`.")


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


def error_responses(*statuses: int) -> dict:
    """OpenAPI responses for the given error statuses, all with the one error body."""
    return {status: ErrorSerializer for status in statuses}


def validated(serializer_class: type[serializers.Serializer], data) -> dict:
    """The validated data of `data`, or a 400 with the per-field errors."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
